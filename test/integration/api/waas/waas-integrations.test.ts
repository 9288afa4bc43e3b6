import t from 'tap';
import { ApiClient } from '../../../helpers/api-client.js';
import { bootstrapDatabase } from '../../../helpers/nodes.js';
import { waasTestbed } from '../../../helpers/waas-testbed.js';
import { LicenseRepo } from '../../../../src/storage/license-repo.js';

// Integrations from both sides (docs/api.md#producer-api-waas): invite, list, accept onto a new
// free account or onto an account the caller administers, subscriptions.
const { backends, creds, api, waas, sql } = await waasTestbed(t);
const orders = await waas.putStream('orders');
const hidden = await waas.putStream('hidden', { isPublic: false });
const accept = (integration: string, body: object, headers: Record<string, string> = {}) =>
  api.request('POST', `/waas/integrations/${integration}/accept`, { body, headers });

t.test('invite → Pending with an invite token of which only a hash is stored', async (t) => {
  const res = await api.manage('POST', '/waas/integrations', { producerTenantPublicId: creds.tenantPublicId, email: 'a@partner.test' });
  t.equal(res.status, 201);
  t.match(res.body, { publicId: /^int_[A-Za-z0-9_-]{22}$/, invitedEmail: 'a@partner.test', status: 'Pending', inviteToken: /^qit_[A-Za-z0-9_-]{43}$/ });
  const [row] = await sql`SELECT invite_token_hash FROM integrations WHERE public_id = ${res.body.publicId}`;
  t.equal(row!.invite_token_hash.length, 32, 'a SHA-256');
  t.notOk(row!.invite_token_hash.toString('utf8').includes(res.body.inviteToken.slice(4, 20)), 'not the token itself');
  const list = await api.manage('GET', `/waas/producer/${creds.tenantPublicId}/integrations`);
  t.equal(list.status, 200);
  t.same(list.body.data.find((i: { publicId: string }) => i.publicId === res.body.publicId), {
    publicId: res.body.publicId, invitedEmail: 'a@partner.test', status: 'Pending', receivingTenantPublicId: null, subscriptions: [],
  });
});

t.test('re-inviting a Pending address re-issues the token: same integration, the old token stops working', async (t) => {
  const first = await waas.invite('again@partner.test');
  const second = await api.manage('POST', '/waas/integrations', { producerTenantPublicId: creds.tenantPublicId, email: 'again@partner.test' });
  t.equal(second.status, 200);
  t.equal(second.body.publicId, first.publicId);
  t.not(second.body.inviteToken, first.inviteToken);
  const old = await accept(first.publicId, { inviteToken: first.inviteToken });
  t.equal(old.status, 404, 'the first token no longer accepts');
  t.equal((await accept(first.publicId, { inviteToken: second.body.inviteToken })).status, 200);
});

t.test('accept onto a new free account: Active, a receiving workspace under a new license, a Build key shown once', async (t) => {
  const invite = await waas.invite('new@partner.test');
  const res = await accept(invite.publicId, { inviteToken: invite.inviteToken });
  t.equal(res.status, 200);
  t.match(res.body, { integrationPublicId: invite.publicId, status: 'Active', receivingTenantPublicId: /^ten_/, licensePublicId: /^lic_/, buildKey: /^qak_/ });
  t.not(res.body.licensePublicId, creds.licensePublicId, 'not under the producer');
  const [license] = await sql`SELECT email FROM licenses WHERE public_id = ${res.body.licensePublicId}`;
  t.equal(license!.email, 'new@partner.test', 'the free account belongs to the invited address');
  const partner = new ApiClient(api.baseUrl, { licensePublicId: res.body.licensePublicId, tenantPublicId: res.body.receivingTenantPublicId, buildKey: res.body.buildKey, ingressKey: '' });
  t.equal((await partner.manage('PUT', partner.tenantPath('/targets/t'), { url: 'http://127.0.0.1:9/x' })).status, 201, 'the Build key configures the receiving workspace');
  const repeat = await accept(invite.publicId, { inviteToken: invite.inviteToken });
  t.equal(repeat.status, 409, 'accepting twice');
  t.equal(repeat.body.error.code, 'conflict');
  const listed = (await api.manage('GET', `/waas/producer/${creds.tenantPublicId}/integrations`)).body.data.find((i: { publicId: string }) => i.publicId === invite.publicId);
  t.match(listed, { status: 'Active', receivingTenantPublicId: res.body.receivingTenantPublicId });
});

t.test('a wrong token or an unknown integration is 404 alike', async (t) => {
  const invite = await waas.invite('wrong@partner.test');
  for (const [id, token] of [[invite.publicId, `${invite.inviteToken}x`], [invite.publicId, 'qit_nope'], ['int_doesnotexist00000000', invite.inviteToken]] as const) {
    const res = await accept(id, { inviteToken: token });
    t.equal(res.status, 404);
    t.equal(res.body.error.code, 'not_found');
  }
  const bad = await accept(invite.publicId, { token: 'x' });
  t.equal(bad.status, 400);
  t.same(bad.body.error.details.map((d: { field: string }) => d.field).sort(), ['inviteToken', 'token']);
});

t.test('accept onto an account the caller administers: its Build key, its license', async (t) => {
  const partner = await bootstrapDatabase(backends.databaseUrl);
  const headers = { 'x-api-key': partner.buildKey, 'x-license-publicid': partner.licensePublicId };
  const invite = await waas.invite('owner@partner.test');
  const res = await accept(invite.publicId, { inviteToken: invite.inviteToken, licensePublicId: partner.licensePublicId }, headers);
  t.equal(res.status, 200);
  t.same(res.body, { integrationPublicId: invite.publicId, status: 'Active', receivingTenantPublicId: partner.tenantPublicId, licensePublicId: partner.licensePublicId },
    'a workspace-scoped key receives into its workspace; no new key');

  // A license-wide Build key: a new workspace inside that license.
  const repo = new LicenseRepo(sql);
  const [lic] = await sql`SELECT id FROM licenses WHERE public_id = ${partner.licensePublicId}`;
  const wide = await repo.createKey({ licenseId: lic!.id, workspaceId: null, profile: 'build' });
  const invite2 = await waas.invite('wide@partner.test');
  const res2 = await accept(invite2.publicId, { inviteToken: invite2.inviteToken, licensePublicId: partner.licensePublicId }, { 'x-api-key': wide.wire, 'x-license-publicid': partner.licensePublicId });
  t.equal(res2.status, 200);
  t.not(res2.body.receivingTenantPublicId, partner.tenantPublicId);
  const [ws] = await sql`SELECT l.public_id FROM workspaces w JOIN licenses l ON l.id = w.license_id WHERE w.public_id = ${res2.body.receivingTenantPublicId}`;
  t.equal(ws!.public_id, partner.licensePublicId, 'the new workspace lives in the partner license');

  const invite3 = await waas.invite('other@partner.test');
  const noCreds = await accept(invite3.publicId, { inviteToken: invite3.inviteToken, licensePublicId: partner.licensePublicId });
  t.equal(noCreds.status, 401, 'onto an existing account needs its credentials');
  const foreign = await accept(invite3.publicId, { inviteToken: invite3.inviteToken, licensePublicId: creds.licensePublicId }, headers);
  t.equal(foreign.status, 404, "another license's id is not found for this caller");
  const ingressOnly = await accept(invite3.publicId, { inviteToken: invite3.inviteToken, licensePublicId: partner.licensePublicId },
    { 'x-api-key': partner.ingressKey, 'x-license-publicid': partner.licensePublicId });
  t.equal(ingressOnly.status, 403, 'an ingress key does not administer the account');
  t.equal(ingressOnly.body.error.code, 'missing_permission');
  const own = await accept(invite3.publicId, { inviteToken: invite3.inviteToken, licensePublicId: creds.licensePublicId },
    { 'x-api-key': creds.buildKey, 'x-license-publicid': creds.licensePublicId });
  t.equal(own.status, 409, "the producer's own workspace cannot receive");
});

t.test('accept into a named workspace of the account (receivingTenantPublicId)', async (t) => {
  const partner = await bootstrapDatabase(backends.databaseUrl);
  const headers = { 'x-api-key': partner.buildKey, 'x-license-publicid': partner.licensePublicId };
  const invite = await waas.invite('named@partner.test');
  const elsewhere = await accept(invite.publicId, { inviteToken: invite.inviteToken, receivingTenantPublicId: creds.tenantPublicId }, headers);
  t.equal(elsewhere.status, 404, 'a workspace the caller does not reach');
  const res = await accept(invite.publicId, { inviteToken: invite.inviteToken, receivingTenantPublicId: partner.tenantPublicId }, headers);
  t.equal(res.status, 200);
  t.equal(res.body.receivingTenantPublicId, partner.tenantPublicId);
  t.equal(res.body.licensePublicId, partner.licensePublicId);
});

t.test('subscriptions, from the partner side', async (t) => {
  const partner = await waas.newPartner('subs@partner.test');
  const base = `/waas/integrations/${partner.integrationPublicId}/subscriptions`;
  const res = await partner.api.manage('POST', base, { catalogEntryPublicId: orders.publicId });
  t.equal(res.status, 201);
  t.match(res.body, { publicId: /^sub_/, catalogEntryPublicId: orders.publicId, status: 'live', receivingQueue: 'orders' });
  const queue = await partner.api.manage('GET', partner.api.tenantPath('/queues/orders'));
  t.equal(queue.status, 200, 'the receiving workspace got a queue named after the stream');
  const repeat = await partner.api.manage('POST', base, { catalogEntryPublicId: orders.publicId });
  t.equal(repeat.status, 200);
  t.equal(repeat.body.publicId, res.body.publicId, 'subscribing again is idempotent');
  t.equal((await partner.api.manage('POST', base, { catalogEntryPublicId: hidden.publicId })).status, 404, 'a Deprecated stream is not offered');
  t.equal((await partner.api.manage('POST', base, { catalogEntryPublicId: 'cat_doesnotexist000000' })).status, 404);
  const list = await partner.api.manage('GET', base);
  t.same(list.body.data, [res.body]);
  t.equal((await api.manage('GET', base)).status, 404, "the producer's key does not reach the partner side");
  const catalog = await partner.api.manage('GET', `/waas/producer/${creds.tenantPublicId}/catalog`);
  t.equal(catalog.status, 200, 'a linked partner reads the catalog');
  t.same(catalog.body.data.map((i: { key: string }) => i.key), ['orders']);
  t.equal((await partner.api.manage('DELETE', `${base}/${res.body.publicId}`)).status, 204);
  t.same((await partner.api.manage('GET', base)).body.data, []);
  t.equal((await partner.api.manage('DELETE', `${base}/${res.body.publicId}`)).status, 204, 'ending again is fine');
});

t.test('a receiving queue name already taken is a conflict, not a takeover', async (t) => {
  const partner = await waas.newPartner('clash@partner.test');
  // The partner publishes a stream of its own called "orders".
  await partner.api.manage('PUT', '/waas/streams', { producerTenantPublicId: partner.receivingTenantPublicId, name: 'orders', isPublic: true });
  const res = await partner.api.manage('POST', `/waas/integrations/${partner.integrationPublicId}/subscriptions`, { catalogEntryPublicId: orders.publicId });
  t.equal(res.status, 409);
  t.equal(res.body.error.code, 'conflict');

  // And the other way round: a receiving queue cannot become a published stream.
  const other = await waas.newPartner('clash2@partner.test');
  await waas.subscribe(other, orders.publicId);
  const publish = await other.api.manage('PUT', '/waas/streams', { producerTenantPublicId: other.receivingTenantPublicId, name: 'orders', isPublic: true });
  t.equal(publish.status, 409);
  t.equal(publish.body.error.code, 'conflict');
  t.notOk((await other.api.manage('GET', other.api.tenantPath('/queues/orders'))).body.public, 'the receiving queue was left as it was');
});

t.test('activations: POST idempotent with the same publicId, DELETE 204 never 404', async (t) => {
  const partner = await waas.newPartner('acts@partner.test');
  const body = { producerTenantPublicId: creds.tenantPublicId, groupKey: 'customer-7', integrationPublicId: partner.integrationPublicId };
  const first = await api.manage('POST', '/waas/activations', body);
  t.equal(first.status, 201);
  t.match(first.body, { publicId: /^act_/, groupKey: 'customer-7', status: 'Active' });
  const again = await api.manage('POST', '/waas/activations', body);
  t.equal(again.status, 200);
  t.same(again.body, first.body, 'same publicId on repeat');
  t.equal((await api.manage('DELETE', '/waas/activations', body)).status, 204);
  t.equal((await api.manage('DELETE', '/waas/activations', body)).status, 204, 'revoking twice');
  const back = await api.manage('POST', '/waas/activations', body);
  t.equal(back.body.publicId, first.body.publicId, 'same publicId after a revoke');
  const unknownIntegration = { ...body, integrationPublicId: 'int_doesnotexist00000000' };
  t.equal((await api.manage('DELETE', '/waas/activations', unknownIntegration)).status, 204, 'unknown integration: 204');
  t.equal((await api.manage('DELETE', '/waas/activations', { ...body, groupKey: 'never-activated' })).status, 204);
  t.equal((await api.manage('DELETE', '/waas/activations', { ...body, producerTenantPublicId: 'ten_doesnotexist00000000' })).status, 204, 'unknown producer: 204');
  t.equal((await api.manage('POST', '/waas/activations', unknownIntegration)).status, 404, 'activating needs a real integration');
  const bad = await api.manage('POST', '/waas/activations', { producerTenantPublicId: creds.tenantPublicId, groupKey: 'a\u0007b', integrationPublicId: 'nope' });
  t.equal(bad.status, 400);
  t.same(bad.body.error.details.map((d: { field: string }) => d.field).sort(), ['groupKey', 'integrationPublicId']);
  const tooLong = await api.manage('POST', '/waas/activations', { ...body, groupKey: 'é'.repeat(128) });
  t.equal(tooLong.status, 400, 'a group key over 255 bytes could never match an event');
  t.same(tooLong.body.error.details.map((d: { field: string }) => d.field), ['groupKey']);
  const both = await api.manage('POST', '/waas/activations', { ...body, groupKey: 'é'.repeat(128), integrationPublicId: 'nope' });
  t.equal(both.status, 400);
  t.same(both.body.error.details.map((d: { field: string }) => d.field).sort(), ['groupKey', 'integrationPublicId'], 'the byte bound and a schema problem in one answer');
});
