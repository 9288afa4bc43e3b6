import t, { type Test } from 'tap';
import { freshBackends } from '../../helpers/backends.js';
import { bootstrapDatabase, clientFor, startTestNode } from '../../helpers/nodes.js';
import { putQueueSettings, testDatabase } from '../../helpers/delivery.js';

const backends = await freshBackends(t);
const creds = await bootstrapDatabase(backends.databaseUrl);
const node = await startTestNode(t, backends, { roles: ['management'] });
const api = clientFor(node.port, creds);
const sql = await testDatabase(t, backends);
const url = 'http://127.0.0.1:9/hook';

async function refused(t: Test, body: object, field: RegExp, rule: RegExp): Promise<void> {
  const res = await api.manage('PUT', api.tenantPath('/targets/rules'), { url, ...body });
  t.equal(res.status, 400, JSON.stringify(body));
  t.equal(res.body.error.code, 'validation_failed');
  t.match(res.body.error.details, [{ field, problem: rule }]);
}

t.test('target headers: the save-time refusals of docs/api.md#ingress', async (t) => {
  await refused(t, { staticHeaders: { 'X-Service-Event-Id': 'x' } }, /staticHeaders/, /cannot be a static header/);
  await refused(t, { staticHeaders: { 'idempotency-key': 'x' } }, /staticHeaders/, /cannot be a static header/);
  await refused(t, { staticHeaders: { 'X-Service-Signature': 'forged' } }, /staticHeaders/, /own X-Service-\* headers/);
  await refused(t, { staticHeaders: { 'Content-Type': 'text/plain' } }, /staticHeaders/, /a header the service sets itself/);
  await refused(t, { staticHeaders: { 'Payments-Signature': 't=1,v1=00' } }, /staticHeaders/, /only the signing step writes it/);
  await refused(t, { staticHeaders: { Host: 'evil.example' } }, /staticHeaders/, /transport/);
  await refused(t, { auth: { mode: 'bearer', token: 't' }, staticHeaders: { Authorization: 'Basic x' } }, /staticHeaders/, /Authorization header of the target's auth mode/);
  await refused(t, { staticHeaders: { 'X-Ok': 'line\r\nInjected: yes' } }, /staticHeaders/, /CR, LF/);
  await refused(t, { groupKeyHeader: 'Authorization' }, /groupKeyHeader/, /never forwardable/);
  await refused(t, { groupKeyHeader: 'X-Service-Group-Key' }, /groupKeyHeader/, /X-Service-\*/);
  await refused(t, { groupKeyHeader: 'Payments-Signature' }, /groupKeyHeader/, /only the signing step writes it/);
  await refused(t, { groupKeyHeader: 'Transfer-Encoding' }, /groupKeyHeader/, /never forwardable/);
  await refused(t, { groupKeyHeader: 'X-Group', staticHeaders: { 'x-group': 'v' } }, /groupKeyHeader/, /collides with a static header/);

  const fine = await api.manage('PUT', api.tenantPath('/targets/rules'), {
    url,
    staticHeaders: { 'X-Env': 'prod', Authorization: 'Token abc' },
    groupKeyHeader: 'X-Group',
  });
  t.equal(fine.status, 201, 'Authorization may be static when the auth mode writes none');
});

t.test('a static or group-key header may not collide with a mapped header of a routed queue', async (t) => {
  await api.manage('PUT', api.tenantPath('/queues/mapped'), {});
  await putQueueSettings(sql, backends, creds.tenantPublicId, 'mapped', {
    mappedHeaders: [{ from: { source: 'header', name: 'X-Customer-Tier' }, as: 'X-Tier', required: false }],
  });
  await api.manage('PUT', api.tenantPath('/targets/colliding'), { url, staticHeaders: { 'x-tier': 'gold' } });
  const route = await api.manage('PUT', api.tenantPath('/queues/mapped/targets/colliding'));
  t.equal(route.status, 400, 'routing them together is refused');
  t.match(route.body.error.message, /static header x-tier collides with a mapped header/);

  await api.manage('PUT', api.tenantPath('/targets/clean'), { url });
  t.equal((await api.manage('PUT', api.tenantPath('/queues/mapped/targets/clean'))).status, 201);
  const change = await api.manage('PUT', api.tenantPath('/targets/clean'), { url, groupKeyHeader: 'X-Tier' });
  t.equal(change.status, 400, 'a routed target cannot take the name afterwards');
  t.match(change.body.error.message, /groupKeyHeader X-Tier collides/);
});

t.test('retryPolicy: validated, stored and shown', async (t) => {
  const policy = { scheduleSeconds: [1, 10, 60], horizonSeconds: 3600, retryableStatuses: [409, 404, 409] };
  const saved = await api.manage('PUT', api.tenantPath('/targets/policy'), { url, retryPolicy: policy });
  t.equal(saved.status, 201);
  t.same(saved.body.retryPolicy, { scheduleSeconds: [1, 10, 60], horizonSeconds: 3600, retryableStatuses: [404, 409] });
  const none = await api.manage('PUT', api.tenantPath('/targets/no-policy'), { url });
  t.equal(none.body.retryPolicy, null, 'null: the service defaults apply');
  const bad: unknown[] = [
    { scheduleSeconds: [], horizonSeconds: 10 },
    { scheduleSeconds: [-1], horizonSeconds: 10 },
    { scheduleSeconds: [1.5], horizonSeconds: 10 },
    { scheduleSeconds: [1] },
    { scheduleSeconds: [1], horizonSeconds: 10, retryableStatuses: [410] },
    { scheduleSeconds: [1], horizonSeconds: 10, retryableStatuses: [500] },
    { scheduleSeconds: [1], horizonSeconds: 10, backoff: 'exp' },
    'fast',
  ];
  for (const retryPolicy of bad) {
    const res = await api.manage('PUT', api.tenantPath('/targets/policy'), { url, retryPolicy });
    t.equal(res.status, 400, JSON.stringify(retryPolicy));
    t.match(res.body.error.details?.[0]?.field, /^retryPolicy/);
  }
});
