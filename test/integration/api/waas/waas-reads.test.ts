import t from 'tap';
import { ApiClient } from '../../../helpers/api-client.js';
import { waasTestbed } from '../../../helpers/waas-testbed.js';

// The /waas reads the console needs to show stored state after a reload:
// blocks per integration, activations, and the partner's own integration list.
// Each returns what was written; another account's ids are 404.
const { creds, api, waas, sql } = await waasTestbed(t);
const T = creds.tenantPublicId;
const anonymous = new ApiClient(api.baseUrl, { ...creds, buildKey: '', ingressKey: '' });

const orders = await waas.putStream('orders');
const refunds = await waas.putStream('refunds');
const invoices = await waas.putStream('invoices');
const pkg = await waas.createPackage('Money');
await waas.addToPackage(pkg.publicId, refunds.publicId);
await waas.addToPackage(pkg.publicId, invoices.publicId);
const partner = await waas.newPartner('reads@partner.test');
const quiet = await waas.newPartner('quiet@partner.test');
const subOrders = await waas.subscribe(partner, orders.publicId);
const subRefunds = await waas.subscribe(partner, refunds.publicId);
await waas.subscribe(partner, invoices.publicId);

t.test('blocks: the stored blocks with names and times, and exactly the subscriptions they pause', async (t) => {
  const path = `/waas/producer/${T}/integrations/${partner.integrationPublicId}/blocks`;
  const none = await api.manage('GET', path);
  t.equal(none.status, 200);
  t.same(none.body, { streams: [], packages: [], pausedSubscriptions: [] }, 'nothing blocked yet');

  await waas.block(partner, 'streams', orders.publicId);
  await waas.block(partner, 'packages', pkg.publicId);
  await waas.block(quiet, 'streams', refunds.publicId); // another integration's block is not this one's
  const times = await sql<{ kind: string; at: Date }[]>`
    SELECT 'stream' AS kind, b.created_at AS at FROM stream_blocks b JOIN integrations i ON i.id = b.integration_id WHERE i.public_id = ${partner.integrationPublicId}
    UNION ALL
    SELECT 'package', b.created_at FROM package_blocks b JOIN integrations i ON i.id = b.integration_id WHERE i.public_id = ${partner.integrationPublicId}`;
  const at = (kind: string) => times.find((r) => r.kind === kind)!.at.toISOString();
  const res = await api.manage('GET', path);
  t.equal(res.status, 200);
  t.same(res.body.streams, [{ catalogEntryPublicId: orders.publicId, name: 'orders', blockedAt: at('stream') }]);
  t.same(res.body.packages, [{ packagePublicId: pkg.publicId, name: 'Money', blockedAt: at('package') }]);
  const paused = res.body.pausedSubscriptions.map((s: { catalogEntryPublicId: string }) => s.catalogEntryPublicId).sort();
  t.same(paused, [orders.publicId, refunds.publicId, invoices.publicId].sort(), 'the stream block and the package block pause three');
  const pausedOf = (cat: string) => res.body.pausedSubscriptions.find((s: { catalogEntryPublicId: string }) => s.catalogEntryPublicId === cat);
  t.same(pausedOf(orders.publicId), { publicId: subOrders.publicId, catalogEntryPublicId: orders.publicId, status: 'paused' });
  t.same(pausedOf(refunds.publicId), { publicId: subRefunds.publicId, catalogEntryPublicId: refunds.publicId, status: 'paused' });

  // Un-blocking the package resumes refunds and invoices; orders stays paused by its own block.
  await waas.unblock(partner, 'packages', pkg.publicId);
  const after = await api.manage('GET', path);
  t.same(after.body.packages, [], 'the un-block is read back');
  t.same(after.body.pausedSubscriptions, [{ publicId: subOrders.publicId, catalogEntryPublicId: orders.publicId, status: 'paused' }]);
  t.equal((await waas.partnerStatus(partner, refunds.publicId)), 'live', 'the partner sees the same');
  t.same((await api.manage('GET', `/waas/producer/${T}/integrations/${quiet.integrationPublicId}/blocks`)).body.streams.map((s: { name: string }) => s.name), ['refunds']);
});

t.test('blocks: other accounts and unknown ids are 404; reads need credentials, not Connect', async (t) => {
  const path = `/waas/producer/${T}/integrations/${partner.integrationPublicId}/blocks`;
  const ingress = await api.request('GET', path, { headers: { 'x-api-key': creds.ingressKey, 'x-license-publicid': creds.licensePublicId } });
  t.equal(ingress.status, 200, 'any key profile reads');
  const byPartner = await partner.api.manage('GET', path);
  t.equal(byPartner.status, 404, 'the partner cannot read the producer workspace');
  t.equal(byPartner.body.error.code, 'not_found');
  const wrongTenant = await partner.api.manage('GET', `/waas/producer/${partner.receivingTenantPublicId}/integrations/${partner.integrationPublicId}/blocks`);
  t.equal(wrongTenant.status, 404, "another producer's integration under the caller's own workspace");
  t.equal((await api.manage('GET', `/waas/producer/${T}/integrations/int_doesnotexist0000000/blocks`)).status, 404);
  const none = await anonymous.request('GET', path);
  t.equal(none.status, 401);
  t.equal(none.body.error.code, 'unauthorized');
  const forged = await api.request('GET', path, { headers: { 'x-api-key': `${creds.buildKey.slice(0, -4)}AAAA`, 'x-license-publicid': creds.licensePublicId } });
  t.equal(forged.status, 401, 'a forged key');
});

t.test('activations: listed by group key with their integration, Revoked ones say so; filters', async (t) => {
  const path = `/waas/producer/${T}/activations`;
  const a = await waas.activate(partner, 'acme');
  const b = await waas.activate(quiet, 'acme');
  const c = await waas.activate(partner, 'zeta');
  await waas.revoke(partner, 'zeta');
  const all = await api.manage('GET', path);
  t.equal(all.status, 200);
  t.same(all.body.data, [
    { publicId: a.publicId, groupKey: 'acme', status: 'Active', integrationPublicId: partner.integrationPublicId },
    { publicId: b.publicId, groupKey: 'acme', status: 'Active', integrationPublicId: quiet.integrationPublicId },
    { publicId: c.publicId, groupKey: 'zeta', status: 'Revoked', integrationPublicId: partner.integrationPublicId },
  ]);
  t.same((await api.manage('GET', `${path}?groupKey=zeta`)).body.data.map((x: { publicId: string }) => x.publicId), [c.publicId]);
  t.same((await api.manage('GET', `${path}?integration=${quiet.integrationPublicId}`)).body.data.map((x: { publicId: string }) => x.publicId), [b.publicId]);
  t.same((await api.manage('GET', `${path}?groupKey=acme&integration=${partner.integrationPublicId}`)).body.data.map((x: { publicId: string }) => x.publicId), [a.publicId]);
  t.same((await api.manage('GET', `${path}?groupKey=nobody`)).body.data, []);

  const bad = await api.manage('GET', `${path}?groupKey=a&groupKey=b&tenant=x`);
  t.equal(bad.status, 400);
  t.equal(bad.body.error.code, 'validation_failed');
  t.same(bad.body.error.details.map((d: { field: string }) => d.field).sort(), ['groupKey', 'tenant']);
  t.equal((await api.manage('GET', `${path}?integration=int_doesnotexist0000000`)).status, 404);
  const own = await partner.api.manage('GET', `/waas/producer/${partner.receivingTenantPublicId}/activations?integration=${partner.integrationPublicId}`);
  t.equal(own.status, 404, "another producer's integration as a filter");
  const foreign = await partner.api.manage('GET', path);
  t.equal(foreign.status, 404, "another account's producer workspace");
  t.equal(foreign.body.error.code, 'not_found');
  t.equal((await anonymous.request('GET', path)).status, 401);
});

t.test('partner list: the integrations received into the caller license, by license or workspace', async (t) => {
  await waas.unblock(quiet, 'streams', refunds.publicId);
  const expected = [{
    integrationPublicId: partner.integrationPublicId,
    producerTenantPublicId: T,
    receivingTenantPublicId: partner.receivingTenantPublicId,
    status: 'Active',
    subscriptions: 3,
  }];
  const byLicense = await partner.api.manage('GET', `/waas/integrations?licensePublicId=${partner.api.creds.licensePublicId}`);
  t.equal(byLicense.status, 200);
  t.same(byLicense.body.data, expected);
  const byTenant = await partner.api.manage('GET', `/waas/integrations?receivingTenantPublicId=${partner.receivingTenantPublicId}`);
  t.same(byTenant.body.data, expected);
  const both = await partner.api.manage('GET', `/waas/integrations?licensePublicId=${partner.api.creds.licensePublicId}&receivingTenantPublicId=${partner.receivingTenantPublicId}`);
  t.same(both.body.data, expected);
  t.same((await quiet.api.manage('GET', `/waas/integrations?licensePublicId=${quiet.api.creds.licensePublicId}`)).body.data[0].subscriptions, 0);
  t.same((await api.manage('GET', `/waas/integrations?licensePublicId=${creds.licensePublicId}`)).body.data, [], 'the producer receives nothing');

  const foreignLicense = await api.manage('GET', `/waas/integrations?licensePublicId=${partner.api.creds.licensePublicId}`);
  t.equal(foreignLicense.status, 404, "another account's license");
  t.equal(foreignLicense.body.error.code, 'not_found');
  t.equal((await api.manage('GET', `/waas/integrations?receivingTenantPublicId=${partner.receivingTenantPublicId}`)).status, 404, "another account's workspace");
  const mixed = await partner.api.manage('GET', `/waas/integrations?licensePublicId=${partner.api.creds.licensePublicId}&receivingTenantPublicId=${quiet.receivingTenantPublicId}`);
  t.equal(mixed.status, 404, "a workspace outside the named license");
  const missing = await partner.api.manage('GET', '/waas/integrations');
  t.equal(missing.status, 400);
  t.equal(missing.body.error.code, 'validation_failed');
  t.equal((await partner.api.manage('GET', '/waas/integrations?licensePublicId=a&extra=1')).status, 400, 'an unknown parameter');
  t.equal((await anonymous.request('GET', `/waas/integrations?licensePublicId=${creds.licensePublicId}`)).status, 401);
  t.equal((await anonymous.request('GET', '/waas/integrations?extra=1')).status, 401, 'credentials are checked before the query');
});
