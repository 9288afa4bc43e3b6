import t from 'tap';
import { freshBackends } from '../../helpers/backends.js';
import { bootstrapDatabase, clientFor, startTestNode } from '../../helpers/nodes.js';
import { startReceiver, type Received } from '../../helpers/receiver.js';
import { sleep, waitForEvent } from '../../helpers/delivery.js';

/**
 * Target health (docs/delivery.md#target-health) and replay (docs/api.md#replay)
 * with short thresholds: a target failing is `failing`, then `warning` (2 s),
 * then disabled (5 s), each step in the workspace's activity; once enabled
 * again, a replay sends exactly what it missed, once each, in order per key.
 */
const backends = await freshBackends(t);
const creds = await bootstrapDatabase(backends.databaseUrl);
const node = await startTestNode(t, backends, {
  delivery: {
    allowNetworks: ['127.0.0.0/8'], allowLoopbackInSingleNode: false,
    retry: { scheduleSeconds: [1], horizonSeconds: 3600, holdInMemoryMs: 1000 },
    disableAfterFailingSeconds: 5, warnAfterFailingSeconds: 2, healthFlushMs: 100,
  },
});
const api = clientFor(node.port, creds);

const health = async (target: string, window = '1h') => {
  const res = await api.manage('GET', api.tenantPath(`/target-health?window=${window}`));
  if (res.status !== 200) throw new Error(`target-health: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.items.find((h: { target: string }) => h.target === target);
};
const waitForHealth = async (target: string, predicate: (h: any) => boolean, what: string) => {
  const until = Date.now() + 30_000;
  for (;;) {
    const h = await health(target);
    if (h && predicate(h)) return h;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(h)}`);
    await sleep(100);
  }
};
const activity = async (query = '') => (await api.manage('GET', api.tenantPath(`/activity${query}`))).body.items as Array<{ kind: string; actor: string; subject: string | null; detail: string | null }>;

t.test('a healthy target: success rate and latency over the window, no failures', async (t) => {
  const receiver = await startReceiver(t);
  await api.wire('fine', 'fine-target', `${receiver.url}/fine`);
  for (const n of [1, 2, 3]) await api.postEvent('fine', JSON.stringify({ n }));
  await receiver.waitFor((r) => r.length === 3, 30_000, 'three deliveries');
  const h = await waitForHealth('fine-target', (x) => x.attempts === 3, 'three attempts counted');
  t.match(h, { state: 'active', consecutiveFailures: 0, lastError: null, failingSince: null, successRate: 1, attempts: 3 });
  t.ok(h.latencyMsMean >= 0 && h.latencyMsMax >= h.latencyMsMean, 'mean and max latency');
  t.ok(h.lastSuccessAt, 'the last success is told');
  const bad = await api.manage('GET', api.tenantPath('/target-health?window=2h'));
  t.same([bad.status, bad.body.error.code, bad.body.error.details[0].field], [400, 'validation_failed', 'window']);
});

t.test('failing → warning → disabled, announced in the activity; enabled again and replayed: exactly the missed events, once each, in order per key', async (t) => {
  const receiver = await startReceiver(t);
  let failing = false;
  /** What the receiver acknowledged (answered 200), in arrival order. */
  const acknowledged: Array<{ key: string; n: number }> = [];
  receiver.responder = (req: Received, res) => {
    if (failing) {
      res.statusCode = 503;
      return void res.end('down');
    }
    acknowledged.push(JSON.parse(req.body.toString('utf8')));
    res.end('ok');
  };
  await api.wire('orders', 'flaky', `${receiver.url}/in`);
  const since = new Date(Date.now() - 1_000).toISOString();
  const post = async (key: string, n: number) => {
    const res = await api.postEvent('orders', JSON.stringify({ key, n }), { 'x-service-partition-key': key });
    t.equal(res.status, 202);
    return res.body.eventId as string;
  };

  // Delivered before the trouble: these must never be sent again.
  const early = [await post('a', 1), await post('b', 1)];
  for (const id of early) await waitForEvent(api, id, (e) => e.deliveries[0]?.status === 'delivered');

  failing = true;
  const missedIds: string[] = [];
  for (const n of [2, 3, 4]) for (const key of ['a', 'b', 'c']) missedIds.push(await post(key, n));
  const failingHealth = await waitForHealth('flaky', (h) => h.state === 'failing' && h.consecutiveFailures > 0, 'failing');
  t.match(failingHealth, { failingSince: String, disabledAt: null, lastError: /503/ });
  t.ok(failingHealth.warnsAt && failingHealth.disablesAt, 'when it will warn and be disabled');
  const warned = await waitForHealth('flaky', (h) => h.state === 'warning', 'warning');
  t.equal(warned.failingSince, failingHealth.failingSince, 'the same streak');
  const disabled = await waitForHealth('flaky', (h) => h.state === 'disabled', 'disabled');
  t.match(disabled, { disabledReason: /every delivery attempt has failed since/, disabledAt: String, failingSince: failingHealth.failingSince });
  t.ok(disabled.successRate < 1, `success rate ${disabled.successRate} over the window`);
  const onlyUnhealthy = (await api.manage('GET', api.tenantPath('/target-health?state=failing,warning,disabled'))).body.items;
  t.same(onlyUnhealthy.map((h: { target: string }) => h.target), ['flaky'], 'the state filter lists the unhealthy ones');

  // Posted while disabled: blocked at once.
  for (const key of ['a', 'c']) missedIds.push(await post(key, 5));
  for (const id of missedIds) await waitForEvent(api, id, (e) => ['blocked', 'failed'].includes(e.deliveries[0]?.status));

  const feed = await activity('?kind=target.warned,target.disabled');
  t.same(feed.map((e) => [e.kind, e.actor, e.subject]), [['target.disabled', 'delivery', 'flaky'], ['target.warned', 'delivery', 'flaky']], 'warned once, then disabled, by delivery');
  t.match(feed[0]!.detail, /every delivery attempt has failed since/);
  t.match(feed[1]!.detail, /will be disabled at/);

  // Back: enable, then replay everything it did not acknowledge since before the first event.
  failing = false;
  const enabled = await api.manage('POST', api.tenantPath('/targets/flaky/enable'));
  t.equal(enabled.status, 200);
  const dry = await api.manage('POST', api.tenantPath('/targets/flaky/replay'), { since, dryRun: true });
  t.same([dry.status, dry.body.count], [200, missedIds.length], 'the dry run counts the missed deliveries only');
  const started = await api.manage('POST', api.tenantPath('/targets/flaky/replay'), { since });
  t.equal(started.status, 202, JSON.stringify(started.body));
  t.equal(started.body.total, missedIds.length);
  let job = started.body;
  for (let i = 0; i < 300 && job.status !== 'done'; i++) {
    await sleep(100);
    job = (await api.manage('GET', api.tenantPath(`/redelivery-jobs/${started.body.jobId}`))).body;
  }
  t.match(job, { kind: 'replay', status: 'done', total: missedIds.length, done: missedIds.length, failed: 0 });
  for (const id of missedIds) await waitForEvent(api, id, (e) => e.deliveries[0]?.status === 'delivered');
  await sleep(1_500); // anything sent twice would arrive by now

  const expected = { a: [1, 2, 3, 4, 5], b: [1, 2, 3, 4], c: [2, 3, 4, 5] };
  for (const [key, ns] of Object.entries(expected)) {
    t.same(acknowledged.filter((m) => m.key === key).map((m) => m.n), ns, `key ${key}: each event once, in order (the early one not again)`);
  }
  t.equal(acknowledged.length, missedIds.length + early.length, 'nothing else arrived');
  t.equal((await health('flaky')).state, 'active', 'healthy again');

  const [finished, replayStarted, reEnabled] = await activity();
  t.match(finished, { kind: 'replay.finished', actor: 'job', subject: started.body.jobId, detail: `done: ${missedIds.length} handed to delivery again` });
  t.match(replayStarted, { kind: 'replay.started', actor: /^key:key_/, subject: started.body.jobId, detail: /^target flaky: 11 missed deliveries since / });
  t.match(reEnabled, { kind: 'target.enabled', actor: replayStarted!.actor, subject: 'flaky' });
});

t.test('a replay job can be cancelled; a second job on the same target waits for the first', async (t) => {
  const bad = await api.manage('POST', api.tenantPath('/targets/flaky/replay'), { since: new Date(Date.now() + 60_000).toISOString() });
  t.same([bad.status, bad.body.error.details?.[0]?.field], [400, 'since']);
  const missing = await api.manage('POST', api.tenantPath('/targets/nope/replay'), { since: new Date().toISOString() });
  t.equal(missing.status, 404);
  const started = await api.manage('POST', api.tenantPath('/targets/flaky/replay'), { since: new Date(Date.now() - 3_600_000).toISOString() });
  t.equal(started.status, 202);
  const cancelled = await api.manage('POST', api.tenantPath(`/redelivery-jobs/${started.body.jobId}/cancel`));
  t.equal(cancelled.status, 200);
  t.ok(['cancelled', 'done'].includes(cancelled.body.status), `the job is over: ${cancelled.body.status}`);
  const again = await api.manage('POST', api.tenantPath(`/redelivery-jobs/${started.body.jobId}/cancel`));
  t.same([again.status, again.body.status], [200, cancelled.body.status], 'idempotent');
  t.equal((await api.manage('POST', api.tenantPath('/redelivery-jobs/rdj_nope/cancel'))).status, 404);
});
