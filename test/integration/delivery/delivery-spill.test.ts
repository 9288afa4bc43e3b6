import t from 'tap';
import { backendConfig, freshBackends } from '../../helpers/backends.js';
import { bootstrapDatabase, clientFor, startTestNode } from '../../helpers/nodes.js';
import { startReceiver, type Received } from '../../helpers/receiver.js';

// A saturated target spills to parking instead of filling its partitions
// (docs/flow-control.md, "A slow target in a shared partition").
const backends = await freshBackends(t);
const creds = await bootstrapDatabase(backends.databaseUrl);
// Four records in memory per partition: a slow target fills that at once.
const base = backendConfig(backends).delivery as Record<string, unknown>;
const node = await startTestNode(t, backends, { delivery: { ...base, maxPendingPerPartition: 4 } });
const api = clientFor(node.port, creds);

const KEYS = 8;

async function wave(from: number, n: number): Promise<void> {
  for (let i = from; i < from + n; i++) {
    const key = `k${i % KEYS}`;
    const res = await api.postEvent('spill', JSON.stringify({ key, i }), { 'x-service-partition-key': key });
    if (res.status !== 202) throw new Error(`event refused: ${res.status} ${JSON.stringify(res.body)}`);
  }
}

/** Per key, the indexes in the order the receiver got them; each must ascend. */
function outOfOrder(requests: Received[]): string[] {
  const last = new Map<string, number>();
  const wrong: string[] = [];
  for (const r of requests) {
    const { key, i } = JSON.parse(r.body.toString()) as { key: string; i: number };
    if ((last.get(key) ?? -1) >= i) wrong.push(`${key}: ${i} after ${last.get(key)}`);
    last.set(key, i);
  }
  return wrong;
}

t.test('a slow target sharing partitions with a fast one: the fast one gets later events at once, the slow one gets all in order', async (t) => {
  const slow = await startReceiver(t);
  const fast = await startReceiver(t);
  let open = 0;
  let most = 0;
  slow.responder = (_req, res) => {
    most = Math.max(most, ++open);
    setTimeout(() => {
      open--;
      res.end();
    }, 100);
  };
  await api.wire('spill', 'spill-slow', `${slow.url}/slow`, {}, { maxConcurrency: 1 });
  await api.wire('spill', 'spill-fast', `${fast.url}/fast`);

  await wave(0, 40);
  await fast.waitFor((r) => r.length >= 40, 30_000, 'the first 40 at the fast target');
  // The slow target takes 100 ms per event, one at a time: about 4 s for the first wave.
  // Without spilling, every partition is full of its records and fetches nothing more until it catches up.
  await wave(40, 40);
  await fast.waitFor((r) => r.length >= 80, 30_000, 'all 80 at the fast target');
  const slowSoFar = slow.requests.length;
  t.ok(slowSoFar < 30, `the fast target had all 80 while the slow one had ${slowSoFar}: the second wave did not wait for it`);

  await slow.waitFor((r) => r.length >= 80, 60_000, 'all 80 at the slow target, in the end');
  await new Promise((r) => setTimeout(r, 300));
  for (const [name, receiver] of [['slow', slow], ['fast', fast]] as const) {
    const ids = receiver.eventIds();
    t.equal(ids.length, 80, `${name}: nothing delivered twice`);
    t.equal(new Set(ids).size, 80, `${name}: 80 distinct events`);
    t.same(outOfOrder(receiver.requests), [], `${name}: per key in order`);
  }
  t.equal(most, 1, 'never more than maxConcurrency (1) open at the slow target');

  // What an owner sees: every event delivered at both targets, the spilled ones with a single attempt.
  let listed: Array<{ targets: Array<{ target: string; status: string; attempts: number }> }> = [];
  for (let tries = 0; tries < 50; tries++) {
    listed = (await api.manage('GET', api.tenantPath('/queues/spill/events?limit=100'))).body.items;
    if (listed.length === 80 && listed.every((e) => e.targets.every((d) => d.status === 'delivered'))) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  t.equal(listed.length, 80);
  t.same(new Set(listed.flatMap((e) => e.targets.map((d) => `${d.target}:${d.status}:${d.attempts}`))), new Set(['spill-slow:delivered:1', 'spill-fast:delivered:1']), 'delivered everywhere, one attempt each');
});
