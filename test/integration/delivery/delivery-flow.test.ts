import t from 'tap';
import { freshBackends } from '../../helpers/backends.js';
import { bootstrapDatabase, clientFor, startTestNode } from '../../helpers/nodes.js';
import { startReceiver } from '../../helpers/receiver.js';
import { scrape } from '../../helpers/prometheus.js';

// Flow control per target (docs/flow-control.md), seen from the receivers.
const backends = await freshBackends(t);
const creds = await bootstrapDatabase(backends.databaseUrl);
const node = await startTestNode(t, backends);
const api = clientFor(node.port, creds);

/** Events without a partition key: each is a lane of its own, so only flow control keeps them from all going at once. */
async function post(queue: string, n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    const res = await api.postEvent(queue, JSON.stringify({ n: i }));
    if (res.status !== 202) throw new Error(`event refused: ${res.status} ${JSON.stringify(res.body)}`);
  }
}

t.test('maxConcurrency and maxRatePerSecond are target settings, validated and shown', async (t) => {
  const path = api.tenantPath('/targets/flow-settings');
  const receiver = await startReceiver(t);
  for (const [body, field] of [
    [{ maxConcurrency: 0 }, 'maxConcurrency'],
    [{ maxConcurrency: 10_001 }, 'maxConcurrency'],
    [{ maxConcurrency: 2.5 }, 'maxConcurrency'],
    [{ maxRatePerSecond: 0 }, 'maxRatePerSecond'],
    [{ maxRatePerSecond: '10' }, 'maxRatePerSecond'],
    [{ maxRatePerSecond: 100_001 }, 'maxRatePerSecond'],
  ] as const) {
    const res = await api.manage('PUT', path, { url: receiver.url, ...body });
    t.equal(res.status, 400, JSON.stringify(body));
    t.equal(res.body.error.code, 'validation_failed');
    t.match(JSON.stringify(res.body), field);
  }
  const saved = await api.manage('PUT', path, { url: receiver.url, maxConcurrency: 7, maxRatePerSecond: 0.5 });
  t.equal(saved.status, 201);
  t.match(saved.body, { maxConcurrency: 7, maxRatePerSecond: 0.5 });
  t.match((await api.manage('GET', path)).body, { maxConcurrency: 7, maxRatePerSecond: 0.5 });
  const again = await api.manage('PUT', path, { url: receiver.url, maxConcurrency: 7, maxRatePerSecond: 0.5 });
  t.equal(again.headers.get('x-streamgate-change'), 'unchanged', 'saving the same values again changes nothing');
  const cleared = await api.manage('PUT', path, { url: receiver.url });
  t.match(cleared.body, { maxConcurrency: null, maxRatePerSecond: null }, 'left out: the delivery.flow defaults');
});

t.test('the receiver never sees more than maxConcurrency requests open at once', async (t) => {
  const receiver = await startReceiver(t);
  let open = 0;
  let most = 0;
  receiver.responder = (_req, res) => {
    most = Math.max(most, ++open);
    setTimeout(() => {
      open--;
      res.end();
    }, 50);
  };
  await api.wire('flow-cap', 'flow-cap-target', `${receiver.url}/cap`, {}, { maxConcurrency: 3 });
  await post('flow-cap', 40);
  await receiver.waitFor((r) => r.length >= 40, 60_000, 'all 40 events');
  t.ok(most <= 3, `at most 3 open at once (saw ${most})`);
  t.ok(most >= 2, `requests did run side by side (saw ${most})`);
  // The only target delivered to so far in this file: its limit, held at its ceiling.
  const metrics = await scrape(`http://127.0.0.1:${node.port}/metrics`);
  t.equal(metrics.value('streamgate_delivery_concurrency_limit'), 3, 'the gauge shows the current limit');
});

t.test('a 429 with Retry-After: 2 pauses the target: no request for about 2 s', async (t) => {
  const receiver = await startReceiver(t);
  let refusedAt: number | null = null;
  receiver.responder = (req, res) => {
    if (refusedAt === null) {
      refusedAt = req.at;
      res.writeHead(429, { 'retry-after': '2' }).end();
    } else res.end();
  };
  await api.wire('flow-pause', 'flow-pause-target', `${receiver.url}/pause`);
  await post('flow-pause', 1);
  await receiver.waitFor((r) => r.length >= 1, 30_000, 'the request answered 429');
  await post('flow-pause', 10);
  await receiver.waitFor((r) => r.length >= 11, 30_000, 'the ten later events');
  const after = receiver.requests.slice(1).map((r) => r.at - refusedAt!);
  // Generous margin: the pause is 2 s; nothing may arrive in the first 1.5 s of it.
  t.ok(after.every((ms) => ms >= 1_500), `first request after the 429 came ${Math.min(...after)} ms later`);
});

t.test('a slow target does not hold back a fast one', async (t) => {
  const slow = await startReceiver(t);
  const fast = await startReceiver(t);
  slow.responder = (_req, res) => void setTimeout(() => res.end(), 1_000);
  await api.wire('flow-both', 'flow-slow', `${slow.url}/slow`, {}, { maxConcurrency: 1 });
  await api.wire('flow-both', 'flow-fast', `${fast.url}/fast`);
  await post('flow-both', 30);
  await fast.waitFor((r) => r.length >= 30, 30_000, 'every event at the fast target');
  t.ok(slow.requests.length < 30, `the slow target still holds its backlog (${slow.requests.length} of 30 so far)`);
  await slow.waitFor((r) => r.length >= 30, 60_000, 'every event at the slow target, in the end');
});

t.test('maxRatePerSecond is honoured over any two-second window', async (t) => {
  const receiver = await startReceiver(t);
  await api.wire('flow-rate', 'flow-rate-target', `${receiver.url}/rate`, {}, { maxRatePerSecond: 5 });
  await post('flow-rate', 25);
  await receiver.waitFor((r) => r.length >= 25, 60_000, 'all 25 events');
  const at = receiver.requests.map((r) => r.at).sort((a, b) => a - b);
  let most = 0;
  for (let i = 0; i < at.length; i++) {
    let n = 0;
    while (i + n < at.length && at[i + n]! - at[i]! < 2_000) n++;
    most = Math.max(most, n);
  }
  // 5/s: 10 in 2 s, plus one of burst and some slack for timer skew.
  t.ok(most <= 13, `at most 13 requests in any 2 s window (saw ${most})`);
  t.ok(at.at(-1)! - at[0]! >= 3_000, `25 requests at 5/s spread over ${at.at(-1)! - at[0]!} ms`);
});
