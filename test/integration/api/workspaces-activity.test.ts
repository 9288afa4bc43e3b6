import t from 'tap';
import { bootstrap } from '../../../src/api/setup/bootstrap.js';
import { LicenseRepo } from '../../../src/storage/license-repo.js';
import { MembershipRepo } from '../../../src/storage/membership-repo.js';
import { ApiClient } from '../../helpers/api-client.js';
import { freshBackends } from '../../helpers/backends.js';
import { testDatabase } from '../../helpers/delivery.js';
import { claimsFor, signHs256 } from '../../helpers/jwt.js';
import { bootstrapDatabase, clientFor, startTestNode } from '../../helpers/nodes.js';

/** New workspaces from the API (who may create one) and the workspace activity feed (docs/api.md#activity). */
const backends = await freshBackends(t);
const creds = await bootstrapDatabase(backends.databaseUrl);
const ISS = 'https://id.example.test/';
const AUD = 'streamgate';
const SECRET = 'workspaces-activity-test-secret';
const node = await startTestNode(t, backends, { auth: { console: { issuer: ISS, audience: AUD, sharedSecret: SECRET } } });
const api = clientFor(node.port, creds);
const sql = await testDatabase(t, backends);
const other = new ApiClient(api.baseUrl, await bootstrap(sql, 'other@example.test'));
const licenses = new LicenseRepo(sql);
const memberships = new MembershipRepo(sql);
const idOf = async (table: 'licenses' | 'workspaces', publicId: string) => (await sql<{ id: string }[]>`SELECT id::text FROM ${sql(table)} WHERE public_id = ${publicId}`)[0]!.id;
const asKey = (key: string, license = creds.licensePublicId) => ({ 'x-api-key': key, 'x-license-publicid': license });
const bearer = (sub: string) => ({ authorization: `Bearer ${signHs256(claimsFor(sub, ISS, AUD, { email: `${sub}@example.test` }), SECRET)}` });
const create = (headers: Record<string, string>, body: unknown = { name: 'Staging' }, license = creds.licensePublicId) =>
  api.request('POST', `/v1/licenses/${license}/workspaces`, { headers, body });

t.test('a license-wide key of profile full or build creates a workspace, empty, with its creation in its activity', async (t) => {
  const licenseId = await idOf('licenses', creds.licensePublicId);
  const wide = await licenses.createKey({ licenseId, workspaceId: null, profile: 'full', name: 'license-wide' });
  const res = await create(asKey(wide.wire), { name: '  Staging  ' });
  t.equal(res.status, 201, JSON.stringify(res.body));
  t.match(res.body, { publicId: /^ten_/, licensePublicId: creds.licensePublicId, name: 'Staging', archived: false, retentionHours: null, defaultAuthMode: 'api_key' });
  const tenant = res.body.publicId as string;
  t.same((await api.request('GET', `/v1/tenants/${tenant}`, { headers: asKey(wide.wire) })).body, res.body, 'GET answers the same workspace');
  t.same((await api.request('GET', `/v1/tenants/${tenant}/queues`, { headers: asKey(wide.wire) })).body, { items: [] }, 'empty');
  const feed = (await api.request('GET', `/v1/tenants/${tenant}/activity`, { headers: asKey(wide.wire) })).body;
  t.match(feed, { items: [{ kind: 'workspace.created', actor: `key:${wide.keyId}`, subject: tenant, detail: 'Staging' }], nextCursor: null });
  const listed = (await api.request('GET', `/v1/licenses/${creds.licensePublicId}/workspaces`, { headers: asKey(wide.wire) })).body.items;
  t.ok(listed.some((w: { tenantPublicId: string }) => w.tenantPublicId === tenant), 'in the license list');
});

t.test('who may not: an ingress key, a workspace-scoped key, another license, bad names', async (t) => {
  const licenseId = await idOf('licenses', creds.licensePublicId);
  const ingress = await licenses.createKey({ licenseId, workspaceId: null, profile: 'ingress', name: 'wide ingress' });
  for (const [what, headers] of [['an ingress key', asKey(ingress.wire)], ['a key scoped to one workspace', asKey(creds.buildKey)]] as const) {
    const res = await create(headers);
    t.same([res.status, res.body.error?.code], [403, 'missing_permission'], what);
  }
  const theirs = await create(asKey(other.creds.buildKey, other.creds.licensePublicId));
  t.same([theirs.status, theirs.body.error?.code], [404, 'not_found'], "another license's key names our license: not found");
  const noAuth = await api.request('POST', `/v1/licenses/${creds.licensePublicId}/workspaces`, { body: { name: 'x' } });
  t.equal(noAuth.status, 401);
  const wide = await licenses.createKey({ licenseId, workspaceId: null, profile: 'build', name: 'wide build' });
  for (const body of [{ name: '' }, { name: '   ' }, { name: 'x'.repeat(101) }, {}, { name: 'ok', extra: 1 }]) {
    const res = await create(asKey(wide.wire), body);
    t.same([res.status, res.body.error?.code], [400, 'validation_failed'], JSON.stringify(body).slice(0, 40));
  }
});

t.test('console users: an Owner creates one and owns it; an Admin, a Member, a stranger and another license\'s Owner cannot', async (t) => {
  const ours = await idOf('workspaces', creds.tenantPublicId);
  await memberships.grant(ours, 'owner-1', 'Owner');
  await memberships.grant(ours, 'admin-1', 'Admin');
  await memberships.grant(ours, 'member-1', 'Member');
  await memberships.grant(await idOf('workspaces', other.creds.tenantPublicId), 'other-owner', 'Owner');

  const made = await create(bearer('owner-1'), { name: 'From the console' });
  t.equal(made.status, 201, JSON.stringify(made.body));
  const tenant = made.body.publicId as string;
  const asOwner = await api.request('GET', `/v1/tenants/${tenant}`, { headers: bearer('owner-1') });
  t.equal(asOwner.status, 200, 'the creator reaches it');
  t.equal((await api.request('PUT', `/v1/tenants/${tenant}/queues/q1`, { headers: bearer('owner-1'), body: {} })).status, 201, 'as Owner: may configure it');
  const feed = (await api.request('GET', `/v1/tenants/${tenant}/activity`, { headers: bearer('owner-1') })).body.items;
  t.match(feed, [{ kind: 'workspace.created', actor: 'user:owner-1@example.test' }]);

  for (const sub of ['admin-1', 'member-1']) {
    const res = await create(bearer(sub));
    t.same([res.status, res.body.error?.code], [403, 'missing_permission'], sub);
  }
  for (const sub of ['stranger', 'other-owner']) {
    const res = await create(bearer(sub));
    t.same([res.status, res.body.error?.code], [404, 'not_found'], `${sub}: not found`);
  }
  t.equal((await api.request('GET', `/v1/tenants/${tenant}`, { headers: bearer('admin-1') })).status, 404, 'others get no role on it');
});

t.test('the activity feed: keys, queues, redelivery jobs, who did each; newest first, paged, filtered by kind', async (t) => {
  const key = await api.manage('POST', api.tenantPath('/keys'), { profile: 'ingress', name: 'sender' });
  t.equal(key.status, 201);
  t.equal((await api.manage('DELETE', api.tenantPath(`/keys/${key.body.keyId}`))).status, 204);
  t.equal((await api.manage('DELETE', api.tenantPath(`/keys/${key.body.keyId}`))).status, 204, 'revoked again: no second entry');
  t.equal((await api.manage('PUT', api.tenantPath('/queues/orders'), {})).status, 201);
  t.equal((await api.manage('PUT', api.tenantPath('/queues/orders'), { ingress: 'closed' })).status, 200);
  t.equal((await api.manage('PUT', api.tenantPath('/queues/orders'), { ingress: 'accepting' })).status, 200);
  t.equal((await api.manage('POST', api.tenantPath('/queues/orders/archive'))).status, 200);
  t.equal((await api.manage('POST', api.tenantPath('/queues/orders/archive'))).status, 200, 'archived again: no second entry');
  t.equal((await api.manage('POST', api.tenantPath('/queues/orders/restore'))).status, 200);
  t.equal((await api.manage('PUT', api.tenantPath('/targets/hook'), { url: 'http://127.0.0.1:9/hook' })).status, 201);
  const now = Date.now();
  const job = await api.manage('POST', api.tenantPath('/targets/hook/redeliveries'), { from: new Date(now - 3_600_000).toISOString(), to: new Date(now).toISOString() });
  t.equal(job.status, 202);
  let status = job.body.status;
  for (let i = 0; i < 100 && status === 'running'; i++) {
    await new Promise((r) => setTimeout(r, 100));
    status = (await api.manage('GET', api.tenantPath(`/redelivery-jobs/${job.body.jobId}`))).body.status;
  }
  t.equal(status, 'done');
  const builder = (await api.manage('GET', `/v1/licenses/${creds.licensePublicId}/keys`)).body.items.find((k: { profile: string; tenantPublicId: string }) => k.profile === 'build' && k.tenantPublicId === creds.tenantPublicId);
  const me = `key:${builder.keyId}`;
  let feed: Array<{ kind: string; actor: string; subject: string | null; detail: string | null }> = [];
  for (let i = 0; i < 50 && feed[0]?.kind !== 'redelivery.finished'; i++) {
    feed = (await api.manage('GET', api.tenantPath('/activity'))).body.items;
    if (feed[0]?.kind !== 'redelivery.finished') await new Promise((r) => setTimeout(r, 100));
  }
  t.same(feed.map((e) => [e.kind, e.actor, e.subject]), [
    ['redelivery.finished', 'job', job.body.jobId],
    ['redelivery.started', me, job.body.jobId],
    ['queue.restored', me, 'orders'],
    ['queue.archived', me, 'orders'],
    ['queue.opened', me, 'orders'],
    ['queue.closed', me, 'orders'],
    ['key.revoked', me, key.body.keyId],
    ['key.created', me, key.body.keyId],
  ]);
  t.match(feed[0]!.detail, /^done: 0 handed to delivery again/);
  t.match(feed[7]!.detail, /profile ingress, name sender/);

  const first = (await api.manage('GET', api.tenantPath('/activity?limit=3'))).body;
  t.equal(first.items.length, 3);
  const second = (await api.manage('GET', api.tenantPath(`/activity?limit=3&cursor=${first.nextCursor}`))).body;
  t.same([...first.items, ...second.items].map((e: { kind: string }) => e.kind), feed.slice(0, 6).map((e) => e.kind), 'pages follow on');
  const keysOnly = (await api.manage('GET', api.tenantPath('/activity?kind=key.created&kind=key.revoked'))).body.items;
  t.same(keysOnly.map((e: { kind: string }) => e.kind), ['key.revoked', 'key.created']);
  for (const query of ['limit=0', 'limit=abc', 'cursor=xyz', 'kind=nope']) {
    const res = await api.manage('GET', api.tenantPath(`/activity?${query}`));
    t.same([res.status, res.body.error?.code], [400, 'validation_failed'], query);
  }
  t.same((await other.manage('GET', other.tenantPath('/activity'))).body.items, [], 'another workspace sees none of it');
  t.equal((await other.manage('GET', api.tenantPath('/activity'))).status, 404);
});

t.test('a PUT that leaves ingress out opens a closed queue, a PUT of a disabled target enables it: both in the feed', async (t) => {
  t.equal((await api.manage('PUT', api.tenantPath('/queues/later'), { ingress: 'closed' })).status, 201);
  t.equal((await api.manage('PUT', api.tenantPath('/queues/later'), {})).status, 200);
  t.equal((await api.manage('PUT', api.tenantPath('/targets/sleepy'), { url: 'http://127.0.0.1:9/a' })).status, 201);
  await sql`UPDATE targets SET disabled_at = now(), disabled_reason = 'test' WHERE name = 'sleepy'`;
  t.equal((await api.manage('PUT', api.tenantPath('/targets/sleepy'), { url: 'http://127.0.0.1:9/b' })).status, 200);
  t.equal((await api.manage('GET', api.tenantPath('/targets/sleepy'))).body.disabled, false);
  const feed = (await api.manage('GET', api.tenantPath('/activity?kind=queue.closed,queue.opened,target.enabled&limit=3'))).body.items;
  t.same(feed.map((e: { kind: string; subject: string; detail: string | null }) => [e.kind, e.subject, e.detail]), [
    ['target.enabled', 'sleepy', 'by saving its settings'],
    ['queue.opened', 'later', null],
    ['queue.closed', 'later', null],
  ]);
});
