import t from 'tap';
import { freshBackends } from '../../helpers/backends.js';
import { bootstrapDatabase, clientFor, startTestNode } from '../../helpers/nodes.js';
import { ApiClient } from '../../helpers/api-client.js';
import { connectDatabase } from '../../../src/storage/db.js';
import { bootstrap } from '../../../src/api/setup/bootstrap.js';

const backends = await freshBackends(t);
const creds = await bootstrapDatabase(backends.databaseUrl);
const node = await startTestNode(t, backends, { roles: ['management'] });
const api = clientFor(node.port, creds);

t.test('PUT is an idempotent upsert that says what changed', async (t) => {
  const path = api.tenantPath('/queues/orders');
  const created = await api.manage('PUT', path, { groupKeyRequired: true });
  t.equal(created.status, 201);
  t.equal(created.headers.get('x-streamgate-change'), 'created');
  t.match(created.body, { name: 'orders', tenantPublicId: creds.tenantPublicId, groupKeyRequired: true, authMode: 'api_key', ingress: 'accepting' });
  t.match(created.body.publicId, /^que_/);
  const again = await api.manage('PUT', path, { groupKeyRequired: true });
  t.equal(again.status, 200);
  t.equal(again.headers.get('x-streamgate-change'), 'unchanged');
  t.equal(again.body.publicId, created.body.publicId, 'same queue');
  const changed = await api.manage('PUT', path, { groupKeyRequired: false });
  t.equal(changed.headers.get('x-streamgate-change'), 'changed');
  const got = await api.manage('GET', path);
  t.equal(got.body.groupKeyRequired, false);
  t.equal((await api.manage('DELETE', path)).status, 204);
  t.equal((await api.manage('GET', path)).status, 404);
  t.equal((await api.manage('DELETE', path)).status, 204, 'delete is idempotent');
});

t.test('bad bodies get validation_failed naming each field', async (t) => {
  const res = await api.manage('PUT', api.tenantPath('/queues/bad'), { hopBudget: 'ten', ingress: 'ajar', colour: 'blue' });
  t.equal(res.status, 400);
  t.equal(res.body.error.code, 'validation_failed');
  const fields = res.body.error.details.map((d: { field: string }) => d.field).sort();
  t.same(fields, ['colour', 'hopBudget', 'ingress']);
  const target = await api.manage('PUT', api.tenantPath('/targets/t1'), { url: 'ftp://example.com/x' });
  t.equal(target.body.error.code, 'validation_failed');
  t.same(target.body.error.details.map((d: { field: string }) => d.field), ['url']);
  const reserved = await api.manage('PUT', api.tenantPath('/targets/t2'), { url: 'http://127.0.0.1:9/x', staticHeaders: { 'X-Service-Event-Id': 'x' } });
  t.equal(reserved.status, 400, 'X-Service-Event-Id cannot be a static header');
  const notJson = await api.request('PUT', api.tenantPath('/queues/q'), {
    raw: 'hello',
    headers: { 'content-type': 'text/plain', 'x-api-key': creds.buildKey, 'x-license-publicid': creds.licensePublicId },
  });
  t.equal(notJson.status, 415);
  t.equal(notJson.body.error.code, 'unsupported_media_type');
  const broken = await api.request('PUT', api.tenantPath('/queues/q'), {
    raw: '{"a":',
    headers: { 'content-type': 'application/json', 'x-api-key': creds.buildKey, 'x-license-publicid': creds.licensePublicId },
  });
  t.equal(broken.status, 400);
  t.equal(broken.body.error.code, 'validation_failed');
});

t.test('targets resolving to internal addresses are refused at save', async (t) => {
  // The test node allows 127.0.0.0/8 only; everything else internal is refused.
  for (const url of ['http://169.254.169.254/latest', 'http://10.0.0.1/x', 'http://[::1]:8080/x', 'http://192.168.1.1/']) {
    const res = await api.manage('PUT', api.tenantPath('/targets/internal'), { url });
    t.equal(res.status, 400, url);
    t.equal(res.body.error.code, 'validation_failed', url);
  }
  const ok = await api.manage('PUT', api.tenantPath('/targets/local'), { url: 'http://127.0.0.1:9/x', auth: { mode: 'bearer', token: 's3cret' } });
  t.equal(ok.status, 201);
  t.same(ok.body.auth, { mode: 'bearer' }, 'secrets are never echoed');
});

t.test('path segments that name nothing are 404, never a 500', async (t) => {
  for (const path of ['/queues/%00', '/targets/a%0Ab', '/events/%00', '/events/evt_x%00/redeliver', '/signing-keys'.replace('/signing-keys', '/queues/%E0%A4%A')]) {
    const res = await api.manage(path.endsWith('redeliver') ? 'POST' : 'GET', api.tenantPath(path));
    t.equal(res.status, 404, path);
    t.equal(res.body?.error?.code, 'not_found', path);
  }
});

t.test('routes need an existing queue and target', async (t) => {
  await api.manage('PUT', api.tenantPath('/queues/rq'), {});
  t.equal((await api.manage('PUT', api.tenantPath('/queues/rq/targets/missing'))).status, 404);
  await api.manage('PUT', api.tenantPath('/targets/rt'), { url: 'http://127.0.0.1:9/x' });
  const first = await api.manage('PUT', api.tenantPath('/queues/rq/targets/rt'));
  t.equal(first.status, 201);
  t.equal((await api.manage('PUT', api.tenantPath('/queues/rq/targets/rt'))).status, 200);
  t.equal((await api.manage('GET', api.tenantPath('/queues/rq/targets/rt'))).status, 200);
  t.equal((await api.manage('DELETE', api.tenantPath('/queues/rq/targets/rt'))).status, 204);
  t.equal((await api.manage('GET', api.tenantPath('/queues/rq/targets/rt'))).status, 404);
});

t.test('management auth: missing, wrong license, ingress profile, other workspace', async (t) => {
  const path = api.tenantPath('/queues/authq');
  const none = await api.request('PUT', path, { body: {} });
  t.equal(none.status, 401);
  t.equal(none.body.error.code, 'unauthorized');
  const noLicense = await api.request('PUT', path, { body: {}, headers: { 'x-api-key': creds.buildKey } });
  t.equal(noLicense.status, 401);
  const ingressKey = await api.request('PUT', path, { body: {}, headers: { 'x-api-key': creds.ingressKey, 'x-license-publicid': creds.licensePublicId } });
  t.equal(ingressKey.status, 403);
  t.equal(ingressKey.body.error.code, 'missing_permission');
  const bearer = await api.request('PUT', path, { body: {}, headers: { authorization: `Bearer ${creds.buildKey}`, 'x-license-publicid': creds.licensePublicId } });
  t.equal(bearer.status, 201, 'Authorization: Bearer qak_… works too');

  const sql = connectDatabase(backends.databaseUrl, 1);
  const other = await bootstrap(sql, 'other@example.test');
  await sql.end();
  const otherApi = new ApiClient(api.baseUrl, other);
  const foreign = await otherApi.manage('GET', api.tenantPath('/queues/authq'));
  t.equal(foreign.status, 404, "another license's workspace does not exist for this caller");
  t.equal(foreign.body.error.code, 'not_found');
});

t.test('keys: created once with the secret, usable at ingress, no escalation', async (t) => {
  const res = await api.manage('POST', api.tenantPath('/keys'), { profile: 'ingress', name: 'ci' });
  t.equal(res.status, 201);
  t.match(res.body.key, /^qak_key_[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
  const sql = connectDatabase(backends.databaseUrl, 1);
  const [row] = await sql`SELECT encode(secret_hash, 'hex') AS h FROM api_keys WHERE key_id = ${res.body.keyId}`;
  await sql.end();
  t.equal(row!.h.length, 64, 'only a SHA-256 hash is stored');
  t.notOk(String(row!.h).includes(res.body.key.split('.')[1]), 'the secret is not stored');
  const full = await api.manage('POST', api.tenantPath('/keys'), { profile: 'full' });
  const fullApi = new ApiClient(api.baseUrl, { ...creds, buildKey: full.body.key });
  const escalate = await fullApi.manage('POST', api.tenantPath('/keys'), { profile: 'build' });
  t.equal(escalate.status, 403);
  t.equal(escalate.body.error.code, 'missing_permission');
});
