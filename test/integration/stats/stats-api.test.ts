import t from 'tap';
import { freshBackends } from '../../helpers/backends.js';
import { bootstrapDatabase, clientFor, startTestNode } from '../../helpers/nodes.js';
import { startReceiver } from '../../helpers/receiver.js';

/**
 * The overview's numbers end to end: events posted to two queues, a receiver
 * answering 200 to some, 500 then 200 to others, 410 to one, and what
 * GET /v1/tenants/{tenant}/stats shows once the rollups are flushed.
 */
const backends = await freshBackends(t);
const creds = await bootstrapDatabase(backends.databaseUrl);
// Test nodes retry every second (test/helpers/backends.ts).
const node = await startTestNode(t, backends);
const api = clientFor(node.port, creds);

interface Totals {
  accepted: number;
  delivered: number;
  retrying: number;
  failed: number;
  latencyP50Ms: number | null;
  latencyP99Ms: number | null;
  attempts: Record<string, number>;
  attemptShares: Record<string, number>;
}

async function statsUntil(path: string, done: (body: any) => boolean): Promise<any> {
  let res = await api.manage('GET', path);
  for (const until = Date.now() + 30_000; !(res.status === 200 && done(res.body)) && Date.now() < until; ) {
    await new Promise((r) => setTimeout(r, 300));
    res = await api.manage('GET', path);
  }
  return res;
}

t.test('accepted, delivered, retrying and failed counts and attempt shares, in total and per queue', async (t) => {
  const receiver = await startReceiver(t);
  // The body says how to answer: "ok" 200; "flaky" 500 the first time, then 200; "gone" 410.
  const seen = new Map<string, number>();
  receiver.responder = (req, res) => {
    const body = req.body.toString();
    const n = (seen.get(body) ?? 0) + 1;
    seen.set(body, n);
    if (body.startsWith('{"gone"')) res.statusCode = 410;
    else if (body.startsWith('{"flaky"') && n === 1) res.statusCode = 500;
    res.end();
  };
  await api.wire('orders', 'orders-hook', `${receiver.url}/orders`);
  await api.wire('refunds', 'refunds-hook', `${receiver.url}/refunds`);
  for (let i = 0; i < 4; i++) t.equal((await api.postEvent('orders', `{"ok":${i}}`)).status, 202);
  for (let i = 0; i < 2; i++) t.equal((await api.postEvent('orders', `{"flaky":${i}}`)).status, 202);
  // An idempotent replay is not another accepted event.
  t.equal((await api.postEvent('refunds', '{"ok":"r"}', { 'idempotency-key': 'once' })).status, 202);
  t.equal((await api.postEvent('refunds', '{"ok":"r"}', { 'idempotency-key': 'once' })).body.replayed, true);
  // 410 disables the target: sent after the other refund was delivered.
  await receiver.waitFor((rs) => rs.some((r) => r.body.toString() === '{"ok":"r"}'), 30_000, 'the refund');
  t.equal((await api.postEvent('refunds', '{"gone":1}')).status, 202);

  const res = await statsUntil(api.tenantPath('/stats?window=1h'), (b) => b.total.totals.delivered + b.total.totals.failed >= 8);
  t.equal(res.status, 200, JSON.stringify(res.body));
  const body = res.body;
  t.match(body, { window: '1h', stepSeconds: 60, queue: null });
  t.equal(body.total.series.length, 60, 'an hour of minutes, zero-filled');
  const total: Totals = body.total.totals;
  t.match(total, { accepted: 8, delivered: 7, retrying: 2, failed: 1 }, JSON.stringify(total));
  t.same(total.attempts, { '2xx': 7, '3xx': 0, '4xx': 1, '5xx': 2, timeout: 0, network: 0, total: 10 });
  t.same(total.attemptShares, { '2xx': 0.7, '3xx': 0, '4xx': 0.1, '5xx': 0.2, timeout: 0, network: 0 });
  t.ok(total.latencyP50Ms !== null && total.latencyP50Ms >= 0, 'a p50');
  // The retries come about a second later (with jitter); a bucket is up to 19 % off.
  t.ok(total.latencyP99Ms! >= 500, `the p99 includes a delivery retried about a second later: ${total.latencyP99Ms} ms`);
  const sum = (k: 'accepted' | 'delivered') => body.total.series.reduce((n: number, p: Record<string, number>) => n + p[k]!, 0);
  t.equal(sum('accepted'), 8, 'the series adds up to the totals');
  t.equal(sum('delivered'), 7);

  const byName = Object.fromEntries(body.queues.map((q: { name: string; totals: Totals }) => [q.name, q.totals]));
  t.same(body.queues.map((q: { name: string }) => q.name), ['orders', 'refunds'], 'busiest queue first');
  t.match(byName.orders, { accepted: 6, delivered: 6, retrying: 2, failed: 0 });
  t.match(byName.refunds, { accepted: 2, delivered: 1, retrying: 0, failed: 1 });
  t.same(byName.refunds.attemptShares, { '2xx': 0.5, '3xx': 0, '4xx': 0.5, '5xx': 0, timeout: 0, network: 0 });

  const one = await api.manage('GET', api.tenantPath('/stats?window=24h&queue=refunds'));
  t.equal(one.status, 200);
  t.match(one.body, { window: '24h', stepSeconds: 600, queue: 'refunds' });
  t.equal(one.body.total.series.length, 144);
  t.match(one.body.total.totals, { accepted: 2, delivered: 1, failed: 1 }, 'only the queue asked for');
  t.same(one.body.queues.map((q: { name: string }) => q.name), ['refunds']);
  const week = await api.manage('GET', api.tenantPath('/stats?window=7d'));
  t.match(week.body, { window: '7d', stepSeconds: 3600 });
  t.equal(week.body.total.series.length, 168);
  t.match(week.body.total.totals, { accepted: 8, delivered: 7, retrying: 2, failed: 1 }, 'the hour rows hold the same counts');
});

t.test('a bad window is the validation error; another workspace is 404; no traffic is all zeros', async (t) => {
  const bad = await api.manage('GET', api.tenantPath('/stats?window=2h'));
  t.equal(bad.status, 400);
  t.equal(bad.body.error.code, 'validation_failed');
  t.same(bad.body.error.details, [{ field: 'window', problem: 'must be one of 1h, 24h, 7d' }]);
  const twice = await api.manage('GET', api.tenantPath('/stats?window=1h&window=7d'));
  t.equal(twice.status, 400);
  const other = await api.manage('GET', '/v1/tenants/ten_nosuchworkspace/stats');
  t.equal(other.status, 404);
  t.equal(other.body.error.code, 'not_found');
  const unauthenticated = await api.request('GET', api.tenantPath('/stats'));
  t.equal(unauthenticated.status, 401);
  const empty = await api.manage('GET', api.tenantPath('/stats?queue=nothing-here'));
  t.equal(empty.status, 200);
  t.match(empty.body.total.totals, { accepted: 0, delivered: 0, latencyP50Ms: null, attempts: { total: 0 } });
  t.same(empty.body.queues, []);
});
