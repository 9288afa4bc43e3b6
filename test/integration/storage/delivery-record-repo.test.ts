import t from 'tap';
import { connectDatabase } from '../../../src/storage/db.js';
import { migrate } from '../../../src/storage/migrate.js';
import { DeliveryRecordRepo, type DeliveryRowInput, type EventRowInput } from '../../../src/storage/delivery-record-repo.js';
import { decodeAttempts } from '../../../src/storage/attempt-codec.js';
import { decodeDeliveries } from '../../../src/storage/delivery-state-codec.js';
import { freshDatabase } from '../../helpers/backends.js';

const T0 = 1_700_000_000_000;
const event = (i: number, targetIds: string[]): EventRowInput => ({
  eventId: `evt_${String(i).padStart(4, '0')}`, workspaceId: '1', queueName: 'q', eventType: null, groupKey: null, partitionKey: null,
  idempotencyKey: null, receivedAt: T0 + i, partition: i % 2, offset: BigInt(i), stream: 'group/topic', runId: null, targetIds,
});
const delivery = (i: number, targetId: string, status: DeliveryRowInput['status'], httpStatus?: number): DeliveryRowInput => ({
  eventId: `evt_${String(i).padStart(4, '0')}`, targetId, status,
  attempts: httpStatus === undefined ? [] : [{ at: new Date(T0 + i + 5).toISOString(), status: httpStatus, durationMs: 2, error: null }],
  stream: 'group/topic', partition: i % 2, offset: BigInt(i), receivedAt: T0 + i,
});

/**
 * The delivery records' batched writes against a real Postgres: events with
 * their deliveries in one row (migration 090). Two writers (two threads or
 * nodes around a rebalance, both delivering the same records) may write
 * batches holding the same rows, each in its own order.
 */
t.test('overlapping batches written at once, in opposite orders: no deadlock, every attempt kept', async (t) => {
  const sql = connectDatabase(await freshDatabase(t), 4);
  t.teardown(() => sql.end());
  await migrate(sql);
  const repo = new DeliveryRecordRepo(sql);
  await repo.writeBatch(Array.from({ length: 300 }, (_, i) => event(i, [String(1 + (i % 3))])), []);
  const rows = (round: number, writer: string): DeliveryRowInput[] =>
    Array.from({ length: 300 }, (_, i) => ({ ...delivery(i, String(1 + (i % 3)), 'delivered'), attempts: [{ at: new Date(T0).toISOString(), writer, round } as never] }));
  const rounds = 15;
  for (let round = 0; round < rounds; round++) {
    const forward = rows(round, 'a');
    const backward = rows(round, 'b').reverse();
    // Each write is one transaction; both lock the same 300 rows.
    const [x, y] = await Promise.all([repo.writeBatch([], forward), repo.writeBatch([], backward)]);
    t.equal(x.length + y.length, 0, 'every delivery found its event');
  }
  const stored = await sql<{ deliveries: string }[]>`SELECT deliveries FROM event_log`;
  t.equal(stored.length, 300, 'one row per event');
  const lines = stored.flatMap((r) => decodeDeliveries(r.deliveries));
  t.equal(lines.length, 300, 'one line per (event, target)');
  t.equal(Math.min(...lines.map((d) => decodeAttempts(d.attempts, 0).length)), rounds * 2, 'every write appended its attempt');
});

t.test('events with their deliveries: pending when routed, merged updates, replays, redelivery, the replay check', async (t) => {
  const sql = connectDatabase(await freshDatabase(t), 2);
  t.teardown(() => sql.end());
  await migrate(sql);
  const repo = new DeliveryRecordRepo(sql);
  const [lic] = await sql<{ id: string }[]>`INSERT INTO licenses (public_id, email) VALUES ('lic_d', 'd@x') RETURNING id`;
  const [ws] = await sql<{ id: string }[]>`INSERT INTO workspaces (public_id, license_id, name) VALUES ('ten_d', ${lic!.id}, 'd') RETURNING id`;
  const ids: string[] = [];
  for (const name of ['a', 'b']) {
    const [row] = await sql<{ id: string }[]>`INSERT INTO targets (public_id, workspace_id, name, url) VALUES (${`tgt_${name}`}, ${ws!.id}, ${name}, 'http://127.0.0.1:9/') RETURNING id`;
    ids.push(row!.id);
  }
  const [a, b] = ids as [string, string];
  const ev = (i: number) => ({ ...event(i, [a, b]), workspaceId: ws!.id });

  // Event 1 seen with its first outcome for a in the same batch; b not attempted yet.
  t.same(await repo.writeBatch([ev(1)], [delivery(1, a, 'retrying', 503)]), [], 'written with its event');
  let shown = await repo.event(ws!.id, 'evt_0001');
  t.same(shown?.deliveries.map((d) => [d.targetName, d.status, d.attempts.map((x) => x.status)]), [['a', 'retrying', [503]], ['b', 'pending', []]]);
  t.equal(shown?.deliveries[1]?.updatedAt, null, 'routed, never written: no update time');
  t.ok(shown?.deliveries[0]?.updatedAt instanceof Date, 'a written delivery has its update time');

  // Later outcomes merge into the row: status replaced, attempts appended, other lines untouched.
  t.same(await repo.writeBatch([], [delivery(1, a, 'delivered', 200), delivery(1, b, 'failed', 500)]), []);
  shown = await repo.event(ws!.id, 'evt_0001');
  t.same(shown?.deliveries.map((d) => [d.status, d.attempts.map((x) => x.status)]), [['delivered', [503, 200]], ['failed', [500]]]);
  t.equal(shown?.deliveries[0]?.attempts[1]?.at, new Date(T0 + 1 + 5).toISOString(), 'attempt times read back');

  // A replay after a restart sees the event again: its row is kept, the new outcome merged.
  t.same(await repo.writeBatch([ev(1)], [delivery(1, b, 'delivered', 200)]), []);
  shown = await repo.event(ws!.id, 'evt_0001');
  t.same(shown?.deliveries.map((d) => [d.status, d.attempts.length]), [['delivered', 2], ['delivered', 2]], 'not reset to pending by the replay');

  // A delivery of an event without a row is handed back, nothing written.
  const orphan = delivery(9, a, 'delivered', 200);
  t.same(await repo.writeBatch([], [orphan]), [orphan], 'handed back');
  t.equal((await sql`SELECT 1 FROM event_log WHERE event_id = 'evt_0009'`).length, 0, 'no row made for it');

  // Redelivery: pending again, attempts kept; an event without a row is left alone.
  await repo.markPending([
    { eventId: 'evt_0001', targetId: b, receivedAt: new Date(T0 + 1).toISOString() },
    { eventId: 'evt_0009', targetId: a, receivedAt: new Date(T0 + 9).toISOString() },
  ]);
  shown = await repo.event(ws!.id, 'evt_0001');
  t.same(shown?.deliveries.map((d) => [d.status, d.attempts.length]), [['delivered', 2], ['pending', 2]]);

  // The replay check: finished deliveries by offset, of this stream only.
  await repo.writeBatch([ev(2), ev(3)], [delivery(2, a, 'blocked'), delivery(3, a, 'retrying', 500)]);
  const rec = (i: number) => ({ eventId: `evt_${String(i).padStart(4, '0')}`, receivedAt: T0 + i, offset: BigInt(i) });
  const check = await repo.replayCheck('group/topic', [rec(1), rec(2), rec(3), rec(4)]);
  t.equal(check.recorded, 3, 'events 1 to 3 are recorded, 4 is not');
  t.same(check.finished.map((f) => `${f.offset}|${f.targetId}`).sort(), [`1|${a}`, `2|${a}`].sort(), 'offset 1 delivered to a (b pending again), 2 blocked is over, 3 retrying is not');
  t.same(await repo.replayCheck('other/topic', [rec(1)]), { recorded: 0, finished: [] }, 'another stream\'s consumer wrote none of them');
});

t.test('event_deliveries_merge: the SQL merge every write goes through', async (t) => {
  const sql = connectDatabase(await freshDatabase(t), 1);
  t.teardown(() => sql.end());
  await migrate(sql);
  const merge = async (stored: string, patch: string, ms: number) =>
    (await sql<{ v: string }[]>`SELECT event_deliveries_merge(${stored}, ${patch}, ${ms}) AS v`)[0]!.v;
  t.equal(await merge('', '', 3), '', 'nothing to nothing');
  t.equal(await merge('7:p::', '', 3), '7:p::', 'an empty patch keeps the text');
  t.equal(await merge('', '7:d::[4,200,3]', 9), '7:d:9:[4,200,3]', 'a new line with its update time');
  t.equal(await merge('7:r:5:[4,503,3]\n12:p::', '7:d::[900,200,2]', 950), '7:d:950:[4,503,3],[900,200,2]\n12:p::', 'appended, status and time replaced');
  t.equal(await merge('7:f:5:[4,null,3,"a:b\\n,c"]', '7:p::', 60), '7:p:60:[4,null,3,"a:b\\n,c"]', 'pending again keeps the attempts (colons, escaped newlines)');
  t.equal(await merge('17:d:5:[1,200,1]', '7:f::[2,500,1]\n17:r::', 8), '17:r:8:[1,200,1]\n7:f:8:[2,500,1]', 'target 7 is not 17');
  const open = async (d: string) => (await sql<{ v: boolean }[]>`SELECT event_deliveries_open(${d}) AS v`)[0]!.v;
  t.equal(await open('7:d:1:\n8:d:2:'), false, 'all delivered: not open');
  t.equal(await open('7:d:1:\n8:p::'), true, 'one pending: open');
  t.equal(await open('7:d:1:[1,null,1,"x\\n8:f:"]'), false, 'an error text cannot open it');
});
