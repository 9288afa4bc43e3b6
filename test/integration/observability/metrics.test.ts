import t from 'tap';
import { freshBackends } from '../../helpers/backends.js';
import { bootstrapDatabase, clientFor, freePort, startTestNode } from '../../helpers/nodes.js';
import { scrape } from '../../helpers/prometheus.js';
import { startReceiver } from '../../helpers/receiver.js';

// Each node here runs alone in this process while it is scraped (channels are
// per process: nodes sharing one count each other's events).
const backends = await freshBackends(t);
const creds = await bootstrapDatabase(backends.databaseUrl);
const local = { port: 0, host: '127.0.0.1' };

t.test('the counters move by exactly what happened, and the whole scrape parses', async (t) => {
  const node = await startTestNode(t, backends, { server: local });
  const api = clientFor(node.port, creds);
  const receiver = await startReceiver(t);
  await api.wire('counted', 'counted-target', `${receiver.url}/hook`);
  const url = `http://127.0.0.1:${node.port}/metrics`;
  const before = await scrape(url);

  for (let i = 0; i < 5; i++) {
    const res = await api.postEvent('counted', JSON.stringify({ n: i }));
    t.equal(res.status, 202);
  }
  const wrong = await api.request('POST', `/events/${creds.tenantPublicId}/counted`, {
    raw: '{"n":99}',
    headers: { 'content-type': 'application/json', 'x-api-key': creds.ingressKey.slice(0, -2) + 'xx' },
  });
  t.equal(wrong.status, 401);
  t.equal(wrong.body.error.code, 'invalid_api_key');
  await receiver.waitFor((r) => r.length >= 5, 30_000, '5 deliveries');

  // Lag comes back to 0 once the group commits (delivery.commitIntervalMs): poll for it.
  let after = await scrape(url);
  const until = Date.now() + 20_000;
  while (after.value('streamgate_consumer_lag_total') !== 0 && Date.now() < until) {
    await new Promise((r) => setTimeout(r, 200));
    after = await scrape(url);
  }
  const moved = (name: string, labels: Record<string, string> = {}) => after.value(name, labels) - before.value(name, labels);

  t.equal(moved('streamgate_ingress_accepted_total'), 5, '5 accepted');
  t.equal(moved('streamgate_ingress_refused_total', { code: 'invalid_api_key' }), 1, '1 refused invalid_api_key');
  t.equal(moved('streamgate_ingress_refused_total'), 1, 'and nothing else refused');
  t.equal(moved('streamgate_http_requests_total', { route: '/events/:tenant/:queue', status: '202' }), 5, 'requests by route pattern and status');
  t.equal(moved('streamgate_http_requests_total', { route: '/events/:tenant/:queue', status: '401' }), 1);
  t.equal(moved('streamgate_delivery_attempts_total', { outcome: '2xx' }), 5, '5 attempts answered 2xx');
  t.equal(moved('streamgate_delivery_attempts_total'), 5, 'no other attempt');
  t.equal(moved('streamgate_delivery_delivered_total'), 5, '5 delivered');
  t.equal(after.count('streamgate_delivery_accept_to_delivered_seconds') - before.count('streamgate_delivery_accept_to_delivered_seconds'), 5);
  t.equal(after.count('streamgate_ingress_append_duration_seconds') - before.count('streamgate_ingress_append_duration_seconds'), 5);
  t.equal(after.count('streamgate_delivery_attempt_duration_seconds') - before.count('streamgate_delivery_attempt_duration_seconds'), 5);
  t.equal(after.count('streamgate_delivery_accept_to_first_attempt_seconds') - before.count('streamgate_delivery_accept_to_first_attempt_seconds'), 5);
  t.equal(moved('streamgate_ingress_bytes_total'), 5 * '{"n":0}'.length, 'body bytes of the accepted events');
  t.equal(after.value('streamgate_consumer_lag_total'), 0, 'lag back to 0');
  const lag = after.families.get('streamgate_consumer_lag')!;
  t.ok(lag.metrics.length > 0, 'lag is exported per owned partition');
  t.ok(lag.metrics.every((m) => m.value === '0'), 'every partition at 0, present rather than absent');
  t.equal(after.value('streamgate_consumer_assigned_partitions'), lag.metrics.length);
  t.ok(after.value('streamgate_process_resident_memory_bytes') > 0, 'process defaults are there');
  t.ok(after.families.has('streamgate_nodejs_eventloop_lag_seconds'));
  t.ok(after.families.has('streamgate_db_pool_connections'));
  t.equal(after.families.get('streamgate_delivery_attempts_total')!.type, 'COUNTER');
  t.equal(after.families.get('streamgate_delivery_attempt_duration_seconds')!.type, 'HISTOGRAM');
  // Cardinality: no event ids, no paths with queue names, no target labels by default.
  const samples = after.text.split('\n').filter((line) => !line.startsWith('#')).join('\n');
  t.notMatch(samples, /evt_/, 'no event id in any label');
  t.notMatch(samples, /counted/, 'no queue or target name in any label');
});

t.test('an Idempotency-Key replay counts as replayed, not accepted; a refused append is no accepted event', async (t) => {
  const node = await startTestNode(t, backends, { server: local });
  const api = clientFor(node.port, creds);
  const receiver = await startReceiver(t);
  await api.wire('replays', 'replays-target', `${receiver.url}/hook`);
  const url = `http://127.0.0.1:${node.port}/metrics`;
  const before = await scrape(url);
  const first = await api.postEvent('replays', '{"a":1}', { 'idempotency-key': 'metrics-replay-1' });
  const again = await api.postEvent('replays', '{"a":1}', { 'idempotency-key': 'metrics-replay-1' });
  t.equal(first.status, 202);
  t.equal(again.status, 202);
  t.equal(again.body.eventId, first.body.eventId, 'the replay answers the first event id');
  const closed = await api.postEvent('no-such-queue', '{"a":1}');
  t.equal(closed.status, 404);
  const after = await scrape(url);
  const moved = (name: string, labels: Record<string, string> = {}) => after.value(name, labels) - before.value(name, labels);
  t.equal(moved('streamgate_ingress_accepted_total'), 1, 'one event accepted');
  t.equal(moved('streamgate_ingress_replayed_total'), 1, 'one replay');
  t.equal(moved('streamgate_ingress_bytes_total'), '{"a":1}'.length, 'bytes of the accepted event only');
  t.equal(after.count('streamgate_ingress_append_duration_seconds') - before.count('streamgate_ingress_append_duration_seconds'), 1, 'one append timed');
  t.equal(moved('streamgate_ingress_refused_total', { code: 'not_found' }), 1, 'the unknown queue is a refusal');
});

t.test('metrics.perTarget labels by target, capped', async (t) => {
  const node = await startTestNode(t, backends, { server: local, metrics: { perTarget: true, maxTargets: 1 } });
  const api = clientFor(node.port, creds);
  const receiver = await startReceiver(t);
  await api.wire('per-a', 'per-a-target', `${receiver.url}/a`);
  await api.wire('per-b', 'per-b-target', `${receiver.url}/b`);
  t.equal((await api.postEvent('per-a', '{}')).status, 202);
  await receiver.waitFor((r) => r.length >= 1, 30_000, 'first delivery');
  t.equal((await api.postEvent('per-b', '{}')).status, 202);
  await receiver.waitFor((r) => r.length >= 2, 30_000, 'second delivery');
  const s = await scrape(`http://127.0.0.1:${node.port}/metrics`);
  const targets = s.families.get('streamgate_delivery_delivered_total')!.metrics.map((m) => m.labels?.target);
  t.equal(targets.length, 2, 'one series for the first target, one for the rest');
  t.ok(targets.includes('other'), 'the target past the cap is counted as other');
  const queues = s.families.get('streamgate_ingress_accepted_total')!.metrics.map((m) => m.labels?.queue);
  t.ok(queues.includes(`${creds.tenantPublicId}/per-a`) && queues.includes('other'), 'queues are capped the same way');
});

t.test('server.metricsPort serves /metrics there and not on the public port', async (t) => {
  const metricsPort = await freePort();
  const node = await startTestNode(t, backends, { server: { ...local, metricsPort } });
  const s = await scrape(`http://127.0.0.1:${metricsPort}/metrics`);
  t.ok(s.families.has('streamgate_ingress_accepted_total'));
  const pub = await fetch(`http://127.0.0.1:${node.port}/metrics`);
  t.equal(pub.status, 404, 'not on the public port');
  t.equal(((await pub.json()) as { error: { code: string } }).error.code, 'not_found');
  t.equal((await fetch(`http://127.0.0.1:${metricsPort}/healthz`)).status, 404, 'the metrics port serves nothing else');
});

t.test('metrics.token: 401 without or with a wrong bearer token, 200 with it', async (t) => {
  const node = await startTestNode(t, backends, { server: local, metrics: { token: 's3cret-metrics-token' } });
  const url = `http://127.0.0.1:${node.port}/metrics`;
  const none = await fetch(url);
  t.equal(none.status, 401);
  t.equal(none.headers.get('www-authenticate'), 'Bearer realm="metrics"');
  t.equal(((await none.json()) as { error: { code: string } }).error.code, 'unauthorized');
  t.equal((await fetch(url, { headers: { authorization: 'Bearer s3cret-metrics-tokeN' } })).status, 401, 'wrong token');
  t.equal((await fetch(url, { headers: { authorization: 'Bearer s3cret' } })).status, 401, 'a prefix of the token');
  t.equal((await fetch(url, { headers: { authorization: 'Basic czNjcmV0LW1ldHJpY3MtdG9rZW4=' } })).status, 401, 'another scheme');
  const ok = await scrape(url, { authorization: 'Bearer s3cret-metrics-token' });
  t.ok(ok.families.has('streamgate_http_requests_total'));
});

t.test('metrics.enabled=false: /metrics answers 404', async (t) => {
  const node = await startTestNode(t, backends, { server: local, metrics: { enabled: false } });
  const res = await fetch(`http://127.0.0.1:${node.port}/metrics`);
  t.equal(res.status, 404);
  t.equal(((await res.json()) as { error: { code: string } }).error.code, 'not_found');
});
