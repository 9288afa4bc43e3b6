import t from 'tap';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { backendEnv, freshBackends, TEST_BACKEND } from '../../helpers/backends.js';
import { bootstrapDatabase, clientFor, startTestNode } from '../../helpers/nodes.js';
import { ApiClient } from '../../helpers/api-client.js';

/**
 * Revoking credentials (issue 13 item 5): GET …/keys lists a workspace's keys
 * without secrets; DELETE …/keys/{keyId} revokes one, and every node (here:
 * two nodes on the same backends) refuses it with 401 invalid_api_key; revoking
 * again, an unknown id or another workspace's key answers 204 and changes
 * nothing; DELETE …/signing-keys/{keyId} of the last key pauses the
 * workspace's signed-request queues (409 queue_paused).
 */
const backends = await freshBackends(t);
const creds = await bootstrapDatabase(backends.databaseUrl);
const nodeA = await startTestNode(t, backends);
const nodeB = await startTestNode(t, backends);
const api = clientFor(nodeA.port, creds);
const onB = clientFor(nodeB.port, creds);

async function newKey(profile: 'ingress' | 'full' | 'build', name: string): Promise<{ keyId: string; key: string }> {
  const res = await api.manage('POST', api.tenantPath('/keys'), { profile, name });
  if (res.status !== 201) throw new Error(`key creation: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

await api.wire('revocable', 'revocable-target', 'http://127.0.0.1:9/none');

t.test('a revoked key is refused on every node; revoking again, unknown or foreign ids are 204 and change nothing', async (t) => {
  const { keyId, key } = await newKey('ingress', 'leaked');
  const post = (client: ApiClient) => client.postEvent('revocable', '{"x":1}', { 'x-api-key': key });
  t.equal((await post(api)).status, 202, 'works on node A');
  t.equal((await post(onB)).status, 202, 'works on node B (now cached there)');

  const listed = await api.manage('GET', api.tenantPath('/keys'));
  t.equal(listed.status, 200);
  const entry = listed.body.data.find((k: { keyId: string }) => k.keyId === keyId);
  t.match(entry, { keyId, name: 'leaked', profile: 'ingress', queueScopes: null, revokedAt: null });
  // Uses are written in batches (every 5 s, once a minute per key and node): wait for the first.
  let used = entry.lastUsedAt;
  for (let i = 0; i < 100 && !used; i++) {
    await new Promise((r) => setTimeout(r, 100));
    used = (await api.manage('GET', api.tenantPath('/keys'))).body.data.find((k: { keyId: string }) => k.keyId === keyId).lastUsedAt;
  }
  t.ok(used && Math.abs(Date.parse(used) - Date.now()) < 60_000, `lastUsedAt set by the posts (${used})`);
  const unused = await newKey('ingress', 'never-used');
  await new Promise((r) => setTimeout(r, 5_500));
  const listedAgain = await api.manage('GET', api.tenantPath('/keys'));
  t.equal(listedAgain.body.data.find((k: { keyId: string }) => k.keyId === unused.keyId).lastUsedAt, null, 'a key never used has none');
  t.notOk(JSON.stringify(listed.body).includes(key.split('.')[1]!), 'no secret in the list');
  t.same(Object.keys(entry).sort(), ['createdAt', 'keyId', 'lastUsedAt', 'name', 'profile', 'queueScopes', 'revokedAt'], 'only these fields');

  // Another workspace cannot revoke it: 204, nothing changes.
  const other = clientFor(nodeA.port, await bootstrapDatabase(backends.databaseUrl));
  t.equal((await other.manage('DELETE', other.tenantPath(`/keys/${keyId}`))).status, 204, "another workspace's DELETE answers 204");
  t.equal((await post(onB)).status, 202, '…and the key still works');

  t.equal((await api.manage('DELETE', api.tenantPath(`/keys/${keyId}`))).status, 204, 'revoked');
  const refusedB = await post(onB);
  t.equal(refusedB.status, 401, 'refused on the other node at once (invalidation bus)');
  t.equal(refusedB.body.error?.code, 'invalid_api_key');
  t.equal((await post(api)).status, 401, 'refused on the node that revoked it');
  t.equal((await api.manage('DELETE', api.tenantPath(`/keys/${keyId}`))).status, 204, 'revoking again: 204, never 404');
  t.equal((await api.manage('DELETE', api.tenantPath('/keys/key_doesnotexist'))).status, 204, 'an unknown id: 204');
  const after = await api.manage('GET', api.tenantPath('/keys'));
  t.ok(after.body.data.find((k: { keyId: string }) => k.keyId === keyId).revokedAt, 'listed with revokedAt');
});

t.test('a key cannot revoke a key of a higher profile', async (t) => {
  const full = await newKey('full', 'configurer');
  const build = await newKey('build', 'builder');
  const asFull = new ApiClient(`http://127.0.0.1:${nodeA.port}`, creds);
  const res = await asFull.request('DELETE', api.tenantPath(`/keys/${build.keyId}`), { headers: { 'x-api-key': full.key, 'x-license-publicid': creds.licensePublicId } });
  t.equal(res.status, 403);
  t.equal(res.body.error?.code, 'missing_permission');
  const listed = await api.manage('GET', api.tenantPath('/keys'));
  t.equal(listed.body.data.find((k: { keyId: string }) => k.keyId === build.keyId).revokedAt, null, 'the build key is untouched');
});

t.test('revoking the last signing key pauses signed-request queues; revoking again is 204', async (t) => {
  const created = await api.manage('POST', api.tenantPath('/signing-keys'), {});
  t.equal(created.status, 201);
  const q = await api.manage('PUT', api.tenantPath('/queues/signed-only'), { authMode: 'signed_request' });
  t.ok(q.status < 300, JSON.stringify(q.body));
  // Unsigned: refused for its missing signature while a key exists…
  const before = await api.postEvent('signed-only', '{}');
  t.not(before.body.error?.code, 'queue_paused', `with a key the queue is not paused (${before.body.error?.code})`);
  t.equal((await api.manage('DELETE', api.tenantPath(`/signing-keys/${created.body.keyId}`))).status, 204);
  const paused = await onB.postEvent('signed-only', '{}');
  t.equal(paused.status, 409, 'no active signing key: the queue is paused, on the other node too');
  t.equal(paused.body.error?.code, 'queue_paused');
  const listed = await api.manage('GET', api.tenantPath('/signing-keys'));
  t.same(listed.body.data, [], 'no active signing key listed');
  t.equal((await api.manage('DELETE', api.tenantPath(`/signing-keys/${created.body.keyId}`))).status, 204, 'again: 204');
});

const CLI = fileURLToPath(new URL('../../../dist/cli.js', import.meta.url));

t.test('streamgate admin revoke KEY_ID: revoked by id, idempotent, an unknown id is an error', async (t) => {
  const { keyId, key } = await newKey('ingress', 'cli-revoked');
  t.equal((await onB.postEvent('revocable', '{}', { 'x-api-key': key })).status, 202, 'works (and is cached) before');
  // Asynchronously: the nodes under test run in this process and must keep serving meanwhile.
  const cli = (id: string) =>
    new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
      execFile(process.execPath, [CLI, 'admin', 'revoke', id], { env: { ...process.env, ...backendEnv(backends, 0), LOG_LEVEL: 'warn' } }, (err, stdout, stderr) =>
        resolve({ status: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      );
    });
  const first = await cli(keyId);
  t.equal(first.status, 0, first.stderr);
  t.equal(first.stdout.trim(), `${keyId} revoked`);
  const again = await cli(keyId);
  t.equal(again.status, 0, 'again: exit 0');
  t.equal(again.stdout.trim(), `${keyId} already revoked`);
  const unknown = await cli('key_nosuchkey');
  t.equal(unknown.status, 1);
  t.match(unknown.stderr, /no API key key_nosuchkey/);
  const listed = await api.manage('GET', api.tenantPath('/keys'));
  t.ok(listed.body.data.find((k: { keyId: string }) => k.keyId === keyId).revokedAt, 'revoked in the database');
  if (TEST_BACKEND === 'kafka') {
    // With Redis the CLI publishes on the invalidation bus: running nodes drop the cached key at once.
    const refused = await onB.postEvent('revocable', '{}', { 'x-api-key': key });
    t.equal(refused.status, 401, 'a running node refuses it at once');
  }
});
