import t, { type Test } from 'tap';
import { freshBackends, REDIS_URL } from '../helpers/backends.js';
import { bootstrapDatabase, clientFor, startTestNode } from '../helpers/nodes.js';
import { startReceiver } from '../helpers/receiver.js';
import { TcpProxy, type CutMode } from '../helpers/tcp-proxy.js';
import { timed, Trickle, type Sent } from '../helpers/trickle.js';
import { signRequest } from '../helpers/signing.js';

/**
 * Redis cut under a steady trickle of events (issue 13 item 8), through a TCP
 * proxy between one node and the shared Redis (Redis exists on the kafka
 * backend only, hence test/cluster). While it is away: API-key ingress keeps
 * answering 202, management reads work, requests that need Redis
 * (Idempotency-Key) answer 503 unavailable at once, no request waits long,
 * and delivery goes on (the config version falls back to Postgres); after
 * the restore every 202'd event has been delivered.
 */
const CUT_MS = 4_000;

async function outage(t: Test, mode: CutMode): Promise<void> {
  const backends = await freshBackends(t);
  const creds = await bootstrapDatabase(backends.databaseUrl);
  const proxy = await TcpProxy.start(t, new URL(REDIS_URL).host);
  const node = await startTestNode(t, backends, { redis: { url: proxy.rewrite(REDIS_URL), keyPrefix: backends.redisPrefix, commandTimeoutMs: 500 } });
  const api = clientFor(node.port, creds);
  const receiver = await startReceiver(t);
  await api.wire('orders', 'orders-target', `${receiver.url}/in`);
  const before = await api.postEvent('orders', '{"warm":true}', { 'idempotency-key': 'before-cut' });
  t.equal(before.status, 202, 'Idempotency-Key works before the cut');
  // A signed_request queue: each request's nonce is checked in Redis.
  t.equal((await api.manage('PUT', api.tenantPath('/queues/signed'), { authMode: 'signed_request' })).status, 201);
  const made = await api.manage('POST', api.tenantPath('/signing-keys'));
  const key = { keyId: made.body.keyId as string, secret: made.body.secret as string };
  const signedPath = `/events/${creds.tenantPublicId}/signed`;
  const signed = (n: number) => {
    const body = JSON.stringify({ n });
    return api.request('POST', signedPath, { raw: body, headers: { 'content-type': 'application/json', ...signRequest({ pathAndQuery: signedPath, body, key }) } });
  };
  t.equal((await signed(0)).status, 202, 'a signed request works before the cut');

  const trickle = new Trickle(api, 'orders', 40);
  await new Promise((r) => setTimeout(r, 1_000));
  const cutAt = Date.now();
  await proxy.cut(mode);
  const during: Sent[] = [];
  const reads: Sent[] = [];
  const signedDuring: Sent[] = [];
  const writes: Sent[] = [];
  while (Date.now() - cutAt < CUT_MS) {
    writes.push(await timed(() => api.manage('PUT', api.tenantPath(`/queues/written-during-${writes.length}`), {})));
    during.push(await timed(() => api.postEvent('orders', '{"idem":true}', { 'idempotency-key': `during-${during.length}` })));
    signedDuring.push(await timed(() => signed(signedDuring.length + 1)));
    reads.push(await timed(() => api.manage('GET', api.tenantPath('/queues/orders'))));
    await new Promise((r) => setTimeout(r, 300));
  }
  const deliveredDuringCut = receiver.requests.filter((r) => r.at > cutAt).length;
  const acceptedDuringCut = trickle.sent.filter((s) => s.at > cutAt + 500 && s.at < cutAt + CUT_MS - 1_000 && s.status === 202).map((s) => s.eventId);
  const deliveredIds = new Set(receiver.eventIds());
  const deliveredOfThose = acceptedDuringCut.filter((id) => deliveredIds.has(String(id))).length;
  await proxy.restore();
  await new Promise((r) => setTimeout(r, 1_500));
  const sent = await trickle.stop();

  const refused = sent.filter((s) => s.status !== 202);
  t.same(refused, [], 'every API-key event was accepted through the cut');
  t.ok(sent.filter((s) => s.at > cutAt && s.at < cutAt + CUT_MS).length >= 20, `events were sent during the cut (${sent.length} in all)`);
  const slowest = Math.max(...sent.map((s) => s.ms), ...during.map((s) => s.ms), ...reads.map((s) => s.ms), ...signedDuring.map((s) => s.ms), ...writes.map((s) => s.ms));
  t.ok(slowest < 3_000, `no request waited 3 s or more (slowest ${slowest} ms)`);

  // The first request after the cut may still be on the way out: judge those after the first half-second.
  const idem = during.filter((s) => s.at > cutAt + 500);
  t.ok(idem.length >= 3, 'Idempotency-Key requests were sent during the cut');
  t.same(idem.filter((s) => s.status !== 503 || s.code !== 'unavailable'), [], 'Idempotency-Key requests answer 503 unavailable while Redis is away');
  t.ok(Math.max(...idem.map((s) => s.ms)) < 1_500, `…within about a second (slowest ${Math.max(...idem.map((s) => s.ms))} ms)`);
  t.same(reads.filter((s) => s.status !== 200), [], 'management reads keep working');
  // A write commits in Postgres, then cannot bump the config version in Redis: 503, so the client knows other nodes may not see it yet.
  t.same(writes.filter((s) => !(s.status === 201 || (s.status === 503 && s.code === 'unavailable'))), [], 'management writes answer 201 or 503 unavailable, never 500');
  const nonces = signedDuring.filter((s) => s.at > cutAt + 500);
  t.same(nonces.filter((s) => s.status !== 503 || s.code !== 'unavailable'), [], 'signed requests (nonces) answer 503 unavailable while Redis is away');
  t.ok(Math.max(...nonces.map((s) => s.ms)) < 1_500, `…within about a second (slowest ${Math.max(...nonces.map((s) => s.ms))} ms)`);

  t.ok(deliveredDuringCut > 0, `delivery went on during the cut (${deliveredDuringCut} deliveries)`);
  t.ok(
    deliveredOfThose >= acceptedDuringCut.length * 0.8,
    `events accepted during the cut were delivered during it (${deliveredOfThose} of ${acceptedDuringCut.length})`,
  );

  const accepted = new Set([...trickle.accepted(), before.body.eventId as string]);
  await receiver.waitFor((requests) => {
    const got = new Set(requests.map((r) => String(r.headers['x-service-event-id'])));
    return [...accepted].every((id) => got.has(id));
  }, 60_000, 'every accepted event');
  t.pass(`all ${accepted.size} accepted events were delivered`);

  const after = await api.postEvent('orders', '{"after":true}', { 'idempotency-key': 'after-cut' });
  t.equal(after.status, 202, 'Idempotency-Key works again after the restore');
  const replay = await api.postEvent('orders', '{"after":true}', { 'idempotency-key': 'after-cut' });
  t.same(replay.body, { eventId: after.body.eventId, replayed: true }, '…and deduplicates');
  t.equal((await signed(1_000)).status, 202, 'signed requests work again after the restore');
}

t.test('Redis refused (port closed, connections reset)', (t) => outage(t, 'refuse'));
t.test('Redis blackholed (connections open, no reply)', (t) => outage(t, 'blackhole'));
