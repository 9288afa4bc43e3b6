import t, { type Test } from 'tap';
import { freshBackends } from '../../helpers/backends.js';
import { bootstrapDatabase, clientFor, startTestNode } from '../../helpers/nodes.js';
import { startReceiver } from '../../helpers/receiver.js';
import { TcpProxy, type CutMode } from '../../helpers/tcp-proxy.js';
import { timed, Trickle, type Sent } from '../../helpers/trickle.js';

/**
 * Postgres cut under a steady trickle of events (issue 13 item 8), through a
 * TCP proxy between one node and the shared Postgres, on both backends. While
 * it is away: management requests answer 503 unavailable within about two
 * seconds, never 500 and never a hang; ingress answers 202 from its caches or
 * 503, never 500; delivery of traffic already routed goes on from its caches.
 * After the restore everything works and every 202'd event is delivered.
 */
const CUT_MS = 4_000;

async function outage(t: Test, mode: CutMode): Promise<void> {
  const backends = await freshBackends(t);
  const creds = await bootstrapDatabase(backends.databaseUrl);
  const proxy = await TcpProxy.start(t, new URL(backends.databaseUrl).host);
  // Caches that outlive the cut: the point is what happens while they serve.
  const node = await startTestNode(t, backends, {
    database: { url: proxy.rewrite(backends.databaseUrl), maxConnections: 10, embeddedPort: 5433, connectTimeoutMs: 2_000, requestTimeoutMs: 2_000 },
    ingress: { cacheTtlMs: 30_000 },
  });
  const api = clientFor(node.port, creds);
  const receiver = await startReceiver(t);
  await api.wire('orders', 'orders-target', `${receiver.url}/in`);
  t.equal((await api.postEvent('orders', '{"warm":true}')).status, 202, 'an event before the cut');
  t.equal((await api.manage('GET', api.tenantPath('/queues/orders'))).status, 200, 'a management read before the cut');

  const trickle = new Trickle(api, 'orders', 40);
  await new Promise((r) => setTimeout(r, 1_000));
  const cutAt = Date.now();
  await proxy.cut(mode);
  const manage: Sent[] = [];
  const uncached: Sent[] = [];
  let n = 0;
  while (Date.now() - cutAt < CUT_MS) {
    // Reads and writes, several at once (as a dashboard would), so queries queue for connections too;
    // and an event to a queue no cache knows, so ingress must ask Postgres.
    const round = await Promise.all([
      timed(() => api.manage('GET', api.tenantPath('/queues/orders'))),
      timed(() => api.manage('GET', api.tenantPath('/targets/orders-target'))),
      timed(() => api.manage('PUT', api.tenantPath(`/queues/during-${n}`), {})),
      timed(() => api.manage('GET', api.tenantPath('/keys'))),
      timed(() => api.postEvent(`uncached-${n++}`, '{}')),
    ]);
    uncached.push(round.pop()!);
    manage.push(...round);
  }
  const deliveredDuringCut = receiver.requests.filter((r) => r.at > cutAt + 200).length;
  await proxy.restore();
  // Wait for the database to answer again before judging "after".
  const back = Date.now();
  let after = await api.manage('GET', api.tenantPath('/queues/orders'));
  while (after.status !== 200 && Date.now() - back < 30_000) {
    await new Promise((r) => setTimeout(r, 200));
    after = await api.manage('GET', api.tenantPath('/queues/orders'));
  }
  const sent = await trickle.stop();

  t.equal(after.status, 200, `management answers again after the restore (${Date.now() - back} ms)`);
  t.equal((await api.manage('PUT', api.tenantPath('/queues/after-cut'), {})).status, 201, 'and writes work');
  const during = manage.filter((s) => s.at >= cutAt);
  t.ok(during.length >= 8, `management requests were sent during the cut (${during.length})`);
  const notUnavailable = during.filter((s) => s.status !== 503 || s.code !== 'unavailable');
  // A read may still be served from a cache; anything else must be 503 unavailable.
  t.same(notUnavailable.filter((s) => s.status !== 200), [], 'management requests answer 503 unavailable (or 200 from a cache) while Postgres is away');
  const slowest = Math.max(...manage.map((s) => s.ms));
  t.ok(slowest < 3_000, `no management request waited 3 s or more (slowest ${slowest} ms)`);

  t.same(sent.filter((s) => s.status !== 202 && !(s.status === 503 && s.code === 'unavailable')), [], 'ingress answers 202 or 503 unavailable, never 500 or nothing');
  t.same(uncached.filter((s) => s.status !== 503 || s.code !== 'unavailable'), [], 'an event whose queue is not cached answers 503 unavailable');
  t.ok(Math.max(...uncached.map((s) => s.ms)) < 3_000, `…without a hang (slowest ${Math.max(...uncached.map((s) => s.ms))} ms)`);
  t.same([...sent, ...manage, ...uncached].filter((s) => s.status === 500), [], 'no 500 at all');
  const slowestIngress = Math.max(...sent.map((s) => s.ms));
  t.ok(slowestIngress < 3_000, `no event waited 3 s or more (slowest ${slowestIngress} ms)`);
  t.ok(sent.filter((s) => s.at > cutAt && s.at < cutAt + CUT_MS && s.status === 202).length > 0, 'ingress accepted events during the cut (cached key and queue)');
  t.ok(deliveredDuringCut > 0, `delivery went on during the cut (${deliveredDuringCut} deliveries)`);

  const accepted = new Set(trickle.accepted());
  await receiver.waitFor((requests) => {
    const got = new Set(requests.map((r) => String(r.headers['x-service-event-id'])));
    return [...accepted].every((id) => got.has(id));
  }, 60_000, 'every accepted event');
  t.pass(`all ${accepted.size} accepted events were delivered`);
  const fresh = await api.postEvent('orders', '{"after":true}');
  t.equal(fresh.status, 202, 'ingress accepts after the restore');
  await receiver.waitFor((r) => r.some((x) => x.headers['x-service-event-id'] === fresh.body.eventId), 30_000, 'the event sent after the restore');
}

t.test('Postgres refused (port closed, connections reset)', (t) => outage(t, 'refuse'));
t.test('Postgres blackholed (connections open, no reply)', (t) => outage(t, 'blackhole'));
