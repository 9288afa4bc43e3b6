import t from 'tap';
import { freshBackends } from '../../helpers/backends.js';
import { allCommitted as allCommittedIn } from '../../helpers/topic.js';
import { bootstrapDatabase, clientFor, startTestNode } from '../../helpers/nodes.js';
import { startReceiver, type Received } from '../../helpers/receiver.js';
import { sleep, testDatabase } from '../../helpers/delivery.js';

const backends = await freshBackends(t);
const creds = await bootstrapDatabase(backends.databaseUrl);
const node = await startTestNode(t, backends);
const api = clientFor(node.port, creds);
const sql = await testDatabase(t, backends);

const keyOf = (r: Received) => JSON.parse(r.body.toString()).key as string;
const seqOf = (r: Received) => JSON.parse(r.body.toString()).n as number;
const ok = (r: Received) => (r as Received & { ok?: boolean }).ok === true;

const allCommitted = () => allCommittedIn(backends);

t.test('a receiver failing one key holds back only that key at that target; other keys and other targets flow', async (t) => {
  const failing = await startReceiver(t);
  const healthy = await startReceiver(t);
  let refuse = true;
  failing.responder = (req, res) => {
    const bad = keyOf(req) === 'bad' && refuse;
    (req as Received & { ok?: boolean }).ok = !bad;
    res.statusCode = bad ? 503 : 200;
    res.end();
  };
  healthy.responder = (req, res) => {
    (req as Received & { ok?: boolean }).ok = true;
    res.end();
  };
  // A 2 s retry is longer than the 1 s the test config holds in memory: the failing lane is parked.
  await api.wire('lanes', 'lanes-failing', `${failing.url}/f`, {}, { retryPolicy: { scheduleSeconds: [2], horizonSeconds: 600 } });
  await api.wire('lanes', 'lanes-healthy', `${healthy.url}/h`);

  const keys = ['bad', 'good-1', 'good-2'];
  const accepted = new Map<string, string[]>(keys.map((k) => [k, []]));
  for (let n = 0; n < 10; n++) {
    for (const key of keys) {
      const res = await api.postEvent('lanes', JSON.stringify({ key, n }), { 'x-service-partition-key': key });
      t.equal(res.status, 202);
      accepted.get(key)!.push(res.body.eventId);
    }
  }

  await healthy.waitFor((r) => r.length >= 30, 30_000, 'every event at the healthy target');
  await failing.waitFor((r) => r.filter((x) => keyOf(x) !== 'bad').length >= 20, 30_000, 'the good keys at the failing target');
  await sleep(2_500); // at least one more retry of the failing head
  const badSoFar = failing.requests.filter((r) => keyOf(r) === 'bad');
  t.ok(badSoFar.length >= 2, `the head of the failing key was retried (${badSoFar.length} attempts)`);
  t.ok(badSoFar.every((r) => seqOf(r) === 0), 'no later event of the failing key was sent while its head failed');

  const [parked] = await sql<{ n: string }[]>`SELECT count(*) AS n FROM parked_deliveries WHERE lane_key = 'k:bad'`;
  t.equal(Number(parked!.n), 10, 'the head and the nine events behind it are parked in Postgres');
  const until = Date.now() + 10_000;
  while (!(await allCommitted()) && Date.now() < until) await sleep(200);
  t.ok(await allCommitted(), 'offsets are committed past the parked events: a restart does not replay them');

  refuse = false;
  await failing.waitFor((r) => r.filter((x) => keyOf(x) === 'bad' && ok(x)).length >= 10, 30_000, 'the failing key, once the receiver recovers');
  for (const [receiver, name] of [[failing, 'failing'], [healthy, 'healthy']] as const) {
    for (const key of keys) {
      const delivered = receiver.requests.filter((r) => keyOf(r) === key && ok(r)).map((r) => String(r.headers['x-service-event-id']));
      t.same(delivered, accepted.get(key), `${name} target, key ${key}: each event once, in accept order`);
    }
  }
  await sleep(300);
  const [left] = await sql<{ n: string }[]>`SELECT count(*) AS n FROM parked_deliveries`;
  t.equal(Number(left!.n), 0, 'the parked lane is gone once drained');
});

t.test('events without a partition key do not wait for each other', async (t) => {
  const receiver = await startReceiver(t);
  let first = true;
  receiver.responder = (req, res) => {
    const stuck = JSON.parse(req.body.toString()).n === 0 && first;
    if (stuck) first = false;
    res.statusCode = stuck ? 500 : 200;
    res.end();
  };
  await api.wire('unkeyed', 'unkeyed-target', `${receiver.url}/u`, {}, { retryPolicy: { scheduleSeconds: [3], horizonSeconds: 600 } });
  for (let n = 0; n < 5; n++) await api.postEvent('unkeyed', JSON.stringify({ n }));
  await receiver.waitFor((r) => r.length >= 5, 30_000, 'the first attempt of each');
  t.same(receiver.requests.slice(0, 5).map(seqOf).sort(), [0, 1, 2, 3, 4], 'all five attempted while the first one failed');
  await receiver.waitFor((r) => r.length >= 6, 30_000, 'the retry of the first');
  t.equal(seqOf(receiver.requests[5]!), 0);
});
