import t from 'tap';
import { bootstrap } from '../../../src/api/setup/bootstrap.js';
import { LicenseRepo } from '../../../src/storage/license-repo.js';
import { MembershipRepo } from '../../../src/storage/membership-repo.js';
import { claimsFor, signHs256 } from '../../helpers/jwt.js';
import { ApiClient } from '../../helpers/api-client.js';
import { freshBackends } from '../../helpers/backends.js';
import { testDatabase } from '../../helpers/delivery.js';
import { bootstrapDatabase, clientFor, startTestNode } from '../../helpers/nodes.js';
import { startReceiver } from '../../helpers/receiver.js';

/**
 * The API the console needs beyond the configuration API (issue 14): license
 * lists, queue and target lists with their states and the actions on them,
 * routes. The event list and bulk redelivery have their own file
 * (console-events.test.ts).
 */
const backends = await freshBackends(t);
const creds = await bootstrapDatabase(backends.databaseUrl);
// Console sessions (docs/api.md#authentication) by a shared-secret token, so the lists are checked for them too.
const ISS = 'https://id.example.test/';
const AUD = 'streamgate';
const SECRET = 'console-api-test-secret';
const node = await startTestNode(t, backends, { auth: { console: { issuer: ISS, audience: AUD, sharedSecret: SECRET } } });
const api = clientFor(node.port, creds);
const sql = await testDatabase(t, backends);
// Another license with a workspace of its own: its credentials must reach nothing of ours.
const other = new ApiClient(api.baseUrl, await bootstrap(sql, 'other@example.test'));

const asKey = (key: string, license = creds.licensePublicId) => ({ 'x-api-key': key, 'x-license-publicid': license });

t.test('license Home: workspaces and keys, as far as the caller reaches, never a secret', async (t) => {
  const licenses = new LicenseRepo(sql);
  const [lic] = await sql<{ id: string }[]>`SELECT id::text FROM licenses WHERE public_id = ${creds.licensePublicId}`;
  const second = await licenses.createWorkspace(lic!.id, 'second');
  const secondKey = await licenses.createKey({ licenseId: lic!.id, workspaceId: second.id, profile: 'full', name: 'second full key' });
  const unscoped = await licenses.createKey({ licenseId: lic!.id, workspaceId: null, profile: 'build', name: 'license-wide' });
  const created = await api.manage('POST', api.tenantPath('/keys'), { profile: 'ingress', name: 'to revoke' });
  t.equal(created.status, 201);
  t.equal((await api.manage('DELETE', api.tenantPath(`/keys/${created.body.keyId}`))).status, 204);

  // A license-wide key sees every workspace and every key that is not revoked.
  const all = await api.request('GET', `/v1/licenses/${creds.licensePublicId}/workspaces`, { headers: asKey(unscoped.wire) });
  t.equal(all.status, 200);
  t.same(all.body.items.map((w: { tenantPublicId: string; name: string }) => [w.tenantPublicId, w.name]), [[creds.tenantPublicId, 'default'], [second.publicId, 'second']]);
  t.ok(all.body.items.every((w: { createdAt: string }) => !Number.isNaN(Date.parse(w.createdAt))));
  const keys = await api.request('GET', `/v1/licenses/${creds.licensePublicId}/keys`, { headers: asKey(unscoped.wire) });
  t.equal(keys.status, 200);
  const byName = new Map(keys.body.items.map((k: { name: string }) => [k.name, k]));
  t.same([...byName.keys()].sort(), ['bootstrap build key', 'bootstrap ingress key', 'license-wide', 'second full key']);
  t.match(byName.get('license-wide'), { keyId: unscoped.keyId, profile: 'build', scopes: null, tenantPublicId: null, lastUsedAt: null });
  t.match(byName.get('second full key'), { keyId: secondKey.keyId, profile: 'full', tenantPublicId: second.publicId });
  t.match(byName.get('bootstrap build key'), { keyId: /^key_/, tenantPublicId: creds.tenantPublicId });
  const text = JSON.stringify(keys.body);
  for (const secret of [unscoped.wire, secondKey.wire, creds.buildKey, creds.ingressKey]) t.notOk(text.includes(secret.split('.')[1]!), 'no secret is listed');
  t.notOk(text.includes(created.body.keyId), 'revoked keys are left out');

  // The bootstrap Build key is scoped to the first workspace: only it and its keys.
  const scoped = await api.manage('GET', `/v1/licenses/${creds.licensePublicId}/workspaces`);
  t.same(scoped.body.items.map((w: { tenantPublicId: string }) => w.tenantPublicId), [creds.tenantPublicId]);
  const scopedKeys = await api.manage('GET', `/v1/licenses/${creds.licensePublicId}/keys`);
  t.same(scopedKeys.body.items.map((k: { name: string }) => k.name).sort(), ['bootstrap build key', 'bootstrap ingress key']);

  // Another license's id, with our key or theirs: 404 either way, nothing leaks.
  for (const path of ['workspaces', 'keys']) {
    const theirs = await api.manage('GET', `/v1/licenses/${other.creds.licensePublicId}/${path}`);
    t.equal(theirs.status, 404, `another license's ${path}`);
    t.equal(theirs.body.error.code, 'not_found');
    const ours = await other.request('GET', `/v1/licenses/${creds.licensePublicId}/${path}`, { headers: asKey(other.creds.buildKey, creds.licensePublicId) });
    t.equal(ours.status, 401, 'a key presented for a license it does not belong to');
    const none = await api.request('GET', `/v1/licenses/${creds.licensePublicId}/${path}`);
    t.equal(none.status, 401);
    t.equal(none.body.error.code, 'unauthorized');
  }
});

t.test('queues: every one with its state, archived ones too; restore makes an archived queue take events again', async (t) => {
  const put = async (name: string, settings: object) => t.equal((await api.manage('PUT', api.tenantPath(`/queues/${name}`), settings)).status, 201, name);
  await put('q-open', {});
  await put('q-closed', { ingress: 'closed' });
  await put('q-archived', { archived: true });
  await put('q-signed', { authMode: 'signed_request' });
  await put('q-payments', { authMode: 'payments' });

  const list = await api.manage('GET', api.tenantPath('/queues'));
  t.equal(list.status, 200);
  const states = Object.fromEntries(list.body.items.map((q: { name: string; state: string; pausedReason: string | null }) => [q.name, [q.state, q.pausedReason]]));
  t.match(states, {
    'q-open': ['accepting', null],
    'q-closed': ['closed', null],
    'q-archived': ['archived', null],
    'q-signed': ['paused', /no active signing key/],
    'q-payments': ['paused', /no payments secret/],
  });
  const single = await api.manage('GET', api.tenantPath('/queues/q-archived'));
  const listed = list.body.items.find((q: { name: string }) => q.name === 'q-archived');
  t.same({ ...listed, state: undefined, pausedReason: undefined }, { ...single.body, state: undefined, pausedReason: undefined }, 'an item is the queue as its GET shows it');

  // A signing key un-pauses the signed-request queue.
  t.equal((await api.manage('POST', api.tenantPath('/signing-keys'))).status, 201);
  const after = await api.manage('GET', api.tenantPath('/queues'));
  t.equal(after.body.items.find((q: { name: string }) => q.name === 'q-signed').state, 'accepting');

  const refused = await api.postEvent('q-archived', '{}');
  t.equal(refused.status, 409);
  t.equal(refused.body.error.code, 'queue_archived');
  const restored = await api.manage('POST', api.tenantPath('/queues/q-archived/restore'));
  t.equal(restored.status, 200);
  t.match(restored.body, { name: 'q-archived', archived: false, state: 'accepting', publicId: /^que_/ });
  const accepted = await api.postEvent('q-archived', '{}');
  t.equal(accepted.status, 202, 'restored: ingress takes events again at once');
  const again = await api.manage('POST', api.tenantPath('/queues/q-archived/restore'));
  t.equal(again.status, 200, 'idempotent');
  t.equal(again.body.state, 'accepting');

  const unknown = await api.manage('POST', api.tenantPath('/queues/nope/restore'));
  t.equal(unknown.status, 404);
  t.equal(unknown.body.error.code, 'not_found');
  const member = await api.request('POST', api.tenantPath('/queues/q-archived/restore'), { headers: asKey(creds.ingressKey) });
  t.equal(member.status, 403, 'an ingress key reads, never writes');
  t.equal(member.body.error.code, 'missing_permission');
  const readable = await api.request('GET', api.tenantPath('/queues'), { headers: asKey(creds.ingressKey) });
  t.equal(readable.status, 200);
});

t.test('archive keeps every other setting, the write-only payments secret included; restore brings the queue back as it was', async (t) => {
  t.equal((await api.manage('PUT', api.tenantPath('/queues/q-kept'), { authMode: 'payments', paymentsSecret: 'whsec_kept', hopBudget: 4 })).status, 201);
  const archived = await api.manage('POST', api.tenantPath('/queues/q-kept/archive'));
  t.equal(archived.status, 200);
  t.match(archived.body, { name: 'q-kept', archived: true, state: 'archived', authMode: 'payments', paymentsSecretSet: true, hopBudget: 4 });
  t.equal((await api.manage('POST', api.tenantPath('/queues/q-kept/archive'))).status, 200, 'idempotent');
  const restored = await api.manage('POST', api.tenantPath('/queues/q-kept/restore'));
  t.match(restored.body, { archived: false, state: 'accepting', paymentsSecretSet: true, hopBudget: 4 }, 'the secret survived: the queue is not paused');
  t.equal((await api.manage('POST', api.tenantPath('/queues/nope/archive'))).body.error.code, 'not_found');
  const member = await api.request('POST', api.tenantPath('/queues/q-kept/archive'), { headers: asKey(creds.ingressKey) });
  t.equal(member.status, 403);
  const stranger = await other.manage('POST', api.tenantPath('/queues/q-kept/archive'));
  t.equal(stranger.status, 404, 'another license cannot archive our queue');
});

t.test('targets: disabled ones with the reason; enable makes one deliver again', async (t) => {
  const receiver = await startReceiver(t);
  let gone = true;
  receiver.responder = (_req, res) => {
    res.statusCode = gone ? 410 : 200;
    res.end();
  };
  await api.wire('t-queue', 't-gone', `${receiver.url}/gone`);
  // Flow ceilings live in columns of their own: lists and enable must show them as GET does.
  t.equal((await api.manage('PUT', api.tenantPath('/targets/t-gone'), { url: `${receiver.url}/gone`, maxConcurrency: 2 })).status, 200);
  t.equal((await api.manage('PUT', api.tenantPath('/targets/t-fine'), { url: `${receiver.url}/fine`, maxConcurrency: 3, maxRatePerSecond: 5 })).status, 201);
  t.equal((await api.postEvent('t-queue', '{"n":1}')).status, 202);

  let target: any;
  for (const until = Date.now() + 30_000; Date.now() < until; await new Promise((r) => setTimeout(r, 150))) {
    const list = await api.manage('GET', api.tenantPath('/targets'));
    t.equal(list.status, 200);
    target = list.body.items.find((x: { name: string }) => x.name === 't-gone');
    if (target?.disabled) break;
  }
  t.match(target, { name: 't-gone', disabled: true, disabledReason: /410/, publicId: /^tgt_/ });
  t.ok(!Number.isNaN(Date.parse(target.disabledAt)), 'disabledAt is a time');
  const list = await api.manage('GET', api.tenantPath('/targets'));
  t.match(list.body.items.find((x: { name: string }) => x.name === 't-fine'), { disabled: false, disabledReason: null, disabledAt: null, maxConcurrency: 3, maxRatePerSecond: 5 });
  t.same(list.body.items.find((x: { name: string }) => x.name === 't-fine'), (await api.manage('GET', api.tenantPath('/targets/t-fine'))).body, 'listed as GET shows it');
  const single = await api.manage('GET', api.tenantPath('/targets/t-gone'));
  t.same(list.body.items.find((x: { name: string }) => x.name === 't-gone'), single.body, 'an item is the target as its GET shows it');

  gone = false;
  const enabled = await api.manage('POST', api.tenantPath('/targets/t-gone/enable'));
  t.equal(enabled.status, 200);
  t.match(enabled.body, { name: 't-gone', disabled: false, disabledReason: null, disabledAt: null, maxConcurrency: 2 });
  t.equal((await api.manage('POST', api.tenantPath('/targets/t-gone/enable'))).status, 200, 'idempotent');
  t.equal((await api.postEvent('t-queue', '{"n":2}')).status, 202);
  await receiver.waitFor((rs) => rs.some((r) => r.body.toString() === '{"n":2}'), 30_000, 'the re-enabled target to get the next event');

  const unknown = await api.manage('POST', api.tenantPath('/targets/nope/enable'));
  t.equal(unknown.status, 404);
});

t.test('routes: every route of the workspace', async (t) => {
  const receiver = await startReceiver(t);
  await api.wire('r-a', 'r-x', `${receiver.url}/x`);
  await api.wire('r-a', 'r-y', `${receiver.url}/y`);
  await api.wire('r-b', 'r-x', `${receiver.url}/x`);
  const res = await api.manage('GET', api.tenantPath('/routes'));
  t.equal(res.status, 200);
  const ours = res.body.items.filter((r: { queue: string }) => r.queue.startsWith('r-'));
  t.same(ours.map((r: { queue: string; target: string }) => `${r.queue}→${r.target}`), ['r-a→r-x', 'r-a→r-y', 'r-b→r-x']);
  t.match(ours[0], { queuePublicId: /^que_/, targetPublicId: /^tgt_/ });
  t.ok(!Number.isNaN(Date.parse(ours[0].createdAt)));
});

t.test("another tenant's workspace: 404 on every list and action, nothing changes", async (t) => {
  const paths: Array<[string, string]> = [
    ['GET', '/queues'], ['POST', '/queues/q-open/restore'], ['GET', '/targets'], ['POST', '/targets/t-fine/enable'], ['GET', '/routes'],
  ];
  for (const [method, rest] of paths) {
    const res = await other.manage(method, api.tenantPath(rest));
    t.equal(res.status, 404, `${method} ${rest}`);
    t.equal(res.body.error.code, 'not_found');
    // Their own workspace does not have our queue or target either.
    if (method === 'POST') t.equal((await other.manage(method, other.tenantPath(rest))).status, 404, `${method} ${rest} in their workspace`);
  }
  const theirs = await other.manage('GET', other.tenantPath('/queues'));
  t.same(theirs.body, { items: [] }, 'their list shows none of ours');
});

t.test('console sessions: a Member reads the lists of its workspaces and changes nothing; a stranger sees nothing', async (t) => {
  const [ws] = await sql<{ id: string }[]>`SELECT id::text FROM workspaces WHERE public_id = ${creds.tenantPublicId}`;
  await new MembershipRepo(sql).grant(ws!.id, 'member-7', 'Member');
  const bearer = (sub: string) => ({ authorization: `Bearer ${signHs256(claimsFor(sub, ISS, AUD), SECRET)}` });
  const member = bearer('member-7');

  const workspaces = await api.request('GET', `/v1/licenses/${creds.licensePublicId}/workspaces`, { headers: member });
  t.equal(workspaces.status, 200);
  t.same(workspaces.body.items.map((w: { tenantPublicId: string }) => w.tenantPublicId), [creds.tenantPublicId], 'only the workspace it has a role on');
  const keys = await api.request('GET', `/v1/licenses/${creds.licensePublicId}/keys`, { headers: member });
  t.equal(keys.status, 200);
  t.ok(keys.body.items.every((k: { tenantPublicId: string | null }) => k.tenantPublicId === creds.tenantPublicId), 'only keys of that workspace');
  for (const rest of ['/queues', '/targets', '/routes']) t.equal((await api.request('GET', api.tenantPath(rest), { headers: member })).status, 200, rest);
  for (const rest of ['/queues/q-open/restore', '/targets/t-fine/enable']) {
    const res = await api.request('POST', api.tenantPath(rest), { headers: member });
    t.equal(res.status, 403, `${rest}: read-only`);
    t.equal(res.body.error.code, 'missing_permission');
  }

  const stranger = bearer('stranger-7');
  t.equal((await api.request('GET', `/v1/licenses/${creds.licensePublicId}/workspaces`, { headers: stranger })).status, 404);
  t.equal((await api.request('GET', api.tenantPath('/queues'), { headers: stranger })).status, 404);
  const forged = { authorization: `Bearer ${signHs256(claimsFor('member-7', ISS, AUD), 'not-the-secret')}` };
  t.equal((await api.request('GET', `/v1/licenses/${creds.licensePublicId}/workspaces`, { headers: forged })).status, 401, 'a forged token');
});
