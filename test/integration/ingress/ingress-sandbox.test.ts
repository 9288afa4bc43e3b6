import t from 'tap';
import { freshBackends } from '../../helpers/backends.js';
import { bootstrapDatabase, clientFor, startTestNode } from '../../helpers/nodes.js';
import { countRecords, readRecords } from '../../helpers/topic.js';

/**
 * The sandbox route (docs/api.md): accepted and persisted like
 * production, with `record.sandbox` telling delivery to simulate (nothing
 * leaves the service). Delivery's simulation is not ingress's: this test
 * stops at the record.
 */
const backends = await freshBackends(t);
const creds = await bootstrapDatabase(backends.databaseUrl);
const node = await startTestNode(t, backends, { roles: ['ingress', 'management'] });
const api = clientFor(node.port, creds);
const tenant = creds.tenantPublicId;
await api.manage('PUT', api.tenantPath('/queues/orders'), { groupKeyRequired: true });

const sandboxPost = (query: string, headers: Record<string, string> = {}) =>
  api.request('POST', `/events/sandbox/${tenant}/orders${query}`, {
    raw: '{"sandbox":true}',
    headers: { 'x-api-key': creds.ingressKey, 'content-type': 'application/json', 'x-service-group-key': 'g', ...headers },
  });

t.test('sandbox events are persisted with their simulation parameters', async (t) => {
  const cases: Array<[string, object]> = [
    ['?sb_fail_code=503&sb_fail_count=2&runId=run_abc', { failCode: 503, failCount: 2, runId: 'run_abc' }],
    ['?sb_fail_count=3', { failCode: null, failCount: 3, runId: null }],
    ['?sb_fail_code=410', { failCode: 410, failCount: 2_147_483_647, runId: null }],
    ['', { failCode: null, failCount: 0, runId: null }],
  ];
  const ids: string[] = [];
  for (const [query] of cases) {
    const res = await sandboxPost(query);
    t.equal(res.status, 202, `${query || '(no query)'}: accepted`);
    ids.push(res.body.eventId);
  }
  const records = await readRecords(backends);
  cases.forEach(([query, sandbox], i) => {
    const record = records.find((r) => r.id === ids[i]);
    t.same(record?.sandbox, sandbox, `${query || '(no query)'}: record.sandbox`);
    t.equal(record?.groupKey, 'g', 'context is read as in production');
  });
});

t.test('the sandbox route checks everything production checks', async (t) => {
  const before = await countRecords(backends);
  const noKey = await sandboxPost('?sb_fail_count=1', { 'x-api-key': '' });
  t.equal(noKey.body.error.code, 'missing_api_key');
  const noGroup = await sandboxPost('?sb_fail_count=1', { 'x-service-group-key': '' });
  t.equal(noGroup.body.error.code, 'context_group_key_required');
  for (const query of ['?sb_fail_code=99', '?sb_fail_code=600', '?sb_fail_code=5x', '?sb_fail_count=-1', '?sb_fail_count=1001', '?runId=has%20space']) {
    const res = await sandboxPost(query);
    t.equal(res.status, 400, query);
    t.equal(res.body.error.code, 'validation_failed', query);
  }
  t.equal(await countRecords(backends), before, 'nothing written');
});

t.test('production events carry no sandbox marker; sandbox parameters there are refused', async (t) => {
  const prod = await api.postEvent('orders', '{}', { 'x-service-group-key': 'g' });
  t.equal(prod.status, 202);
  t.equal((await readRecords(backends)).find((r) => r.id === prod.body.eventId)?.sandbox, undefined);
  const refused = await api.request('POST', `/events/${tenant}/orders?runId=r1`, {
    raw: '{}',
    headers: { 'x-api-key': creds.ingressKey, 'x-service-group-key': 'g' },
  });
  t.equal(refused.status, 400);
  t.equal(refused.body.error.code, 'sandbox_query_not_allowed');
});
