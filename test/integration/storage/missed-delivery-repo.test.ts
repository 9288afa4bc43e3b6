import t from 'tap';
import { connectDatabase } from '../../../src/storage/db.js';
import { migrate } from '../../../src/storage/migrate.js';
import { DeliveryRecordRepo, type DeliveryRowInput, type EventRowInput } from '../../../src/storage/delivery-record-repo.js';
import type { DeliveryStatus } from '../../../src/storage/delivery-state-codec.js';
import { decodeDeliveries } from '../../../src/storage/delivery-state-codec.js';
import { MissedDeliveryRepo, type MissedRange } from '../../../src/storage/missed-delivery-repo.js';
import { RedeliveryJobRepo } from '../../../src/storage/redelivery-job-repo.js';
import { freshDatabase } from '../../helpers/backends.js';
import { sleep } from '../../helpers/delivery.js';

const T0 = 1_700_000_000_000;
// Target ids where one is a prefix of the other: a line of 11 must never read as one of 1.
const A = '1';
const B = '11';

/**
 * The event rows, as the delivery pipeline writes them (one row per event,
 * its deliveries inside, migration 090). Log order (partition, offset) is not
 * receive order: event 2 is on partition 1, received before event 4 on partition 0.
 *
 *   event  partition/offset  key   A          B
 *   0      0/0               k     delivered  failed
 *   1      0/1               k     failed     delivered
 *   2      1/0               k2    blocked    blocked
 *   3      0/2               k     delivered  (not routed)
 *   4      0/3               k     blocked    pending (routed, never written)
 *   5      1/1               k2    retrying   failed
 *   6      1/2               —     pending    (not routed)
 *   7      0/4               —     failed     (not routed)   received before `since`
 *   8      0/5  (workspace 2)      failed     (not routed)
 *   9      1/3               k2    failed     (not routed)   then gone (past retention)
 */
const layout: Array<{ i: number; p: number; o: number; key: string | null; ws?: string; at?: number; a: DeliveryStatus; b?: DeliveryStatus }> = [
  { i: 0, p: 0, o: 0, key: 'k', a: 'delivered', b: 'failed' },
  { i: 1, p: 0, o: 1, key: 'k', a: 'failed', b: 'delivered' },
  { i: 2, p: 1, o: 0, key: 'k2', a: 'blocked', b: 'blocked' },
  { i: 3, p: 0, o: 2, key: 'k', a: 'delivered' },
  { i: 4, p: 0, o: 3, key: 'k', a: 'blocked', b: 'pending' },
  { i: 5, p: 1, o: 1, key: 'k2', a: 'retrying', b: 'failed' },
  { i: 6, p: 1, o: 2, key: null, a: 'pending' },
  { i: 7, p: 0, o: 4, key: null, a: 'failed', at: T0 - 60_000 },
  { i: 8, p: 0, o: 5, key: null, a: 'failed', ws: '2' },
  { i: 9, p: 1, o: 3, key: 'k2', a: 'failed' },
];
const id = (i: number) => `evt_${i}`;
const receivedAt = (i: number) => layout.find((e) => e.i === i)?.at ?? T0 + i * 1_000;

/**
 * MissedDeliveryRepo (what a replay sends, docs/api.md#replay) on the
 * delivery state kept in event_log.deliveries: only the target's failed and
 * blocked deliveries, of its workspace, received since the time and written by
 * the cutoff; in log order, page by page; whatever the other targets' states
 * of the same events, which handing A's over to delivery leaves as they are.
 */
t.test('a target\'s missed deliveries: failed or blocked, its own, in log order, paged; other targets untouched', async (t) => {
  const sql = connectDatabase(await freshDatabase(t), 2);
  t.teardown(() => sql.end());
  await migrate(sql);
  const records = new DeliveryRecordRepo(sql);
  const missed = new MissedDeliveryRepo(sql);
  const jobs = new RedeliveryJobRepo(sql);

  const events: EventRowInput[] = layout.map((e) => ({
    eventId: id(e.i), workspaceId: e.ws ?? '1', queueName: 'q', eventType: null, groupKey: null, partitionKey: e.key, idempotencyKey: null,
    receivedAt: receivedAt(e.i), partition: e.p, offset: BigInt(e.o), stream: 'group/topic', runId: null,
    targetIds: e.b === undefined ? [A] : [A, B],
  }));
  const written = (target: string, status: DeliveryStatus, e: (typeof layout)[number]): DeliveryRowInput => ({
    eventId: id(e.i), targetId: target, status, stream: 'group/topic', partition: e.p, offset: BigInt(e.o), receivedAt: receivedAt(e.i),
    attempts: status === 'pending' ? [] : [{ at: new Date(receivedAt(e.i) + 5).toISOString(), status: status === 'delivered' ? 200 : 503, durationMs: 2, error: null }],
  });
  // Routed only ("pending", never written) stays as the event row made it: no delivery row for it.
  const deliveries = layout.flatMap((e) => [
    ...(e.a === 'pending' ? [] : [written(A, e.a, e)]),
    ...(e.b === undefined || e.b === 'pending' ? [] : [written(B, e.b, e)]),
  ]);
  t.same(await records.writeBatch(events, deliveries), [], 'every delivery found its event');
  await sql`DELETE FROM event_log WHERE event_id = ${id(9)}`; // the retention sweep took it

  const range = (target: string, cutoff: string): MissedRange => ({ workspaceId: '1', targetId: target, since: new Date(T0 - 1), cutoff });
  const all = async (r: MissedRange, pageSize: number) => {
    const pages: string[][] = [];
    let after = null;
    for (;;) {
      const page = await missed.next(r, after, pageSize);
      pages.push(page.map((d) => d.eventId));
      const last = page[page.length - 1];
      if (!last) return pages;
      after = { logPartition: last.logPartition, logOffset: last.logOffset };
    }
  };

  const cutoff = await jobs.now();
  t.same(await all(range(A, cutoff), 2), [[id(1), id(4)], [id(2)], []],
    'A: failed and blocked only (not its delivered 0 and 3 of the same key, not retrying 5 or pending 6), in log order, two per page');
  t.equal(await missed.count(range(A, cutoff)), 3);
  const [first] = await missed.next(range(A, cutoff), null, 1);
  t.same(first, { eventId: id(1), receivedAt: new Date(receivedAt(1)).toISOString().replace('Z', '000Z'), logPartition: 0, logOffset: 1n, partitionKey: 'k' },
    'where the event is in the log, its receive time to the microsecond, its key');
  t.same((await all(range(B, cutoff), 10)).flat(), [id(0), id(2), id(5)], 'B (11): its own failed and blocked, never A\'s lines (1 is a prefix of 11)');
  t.equal(await missed.count({ ...range(A, cutoff), workspaceId: '2' }), 1, 'another workspace\'s event is its own');
  t.equal(await missed.count({ ...range(A, cutoff), since: new Date(T0 - 120_000) }), 4, 'an earlier since takes in event 7');
  t.equal(await missed.count({ ...range(A, cutoff), since: new Date(receivedAt(2)) }), 2, 'since is inclusive: events 2 and 4');

  // Written after the cutoff: not this replay's (a job's own deliveries failing again are not read twice).
  await sleep(20);
  await records.writeBatch([], [written(A, 'failed', layout[5]!)]);
  t.equal(await missed.count(range(A, cutoff)), 3, 'event 5 failed after the cutoff: not in it');
  t.equal(await missed.count(range(A, await jobs.now())), 4, 'in a later one');

  // Handing A's missed deliveries over (what redeliver does) leaves B's lines of the same events as they were.
  const lines = async (target: string) => {
    const rows = await sql<{ event_id: string; deliveries: string }[]>`SELECT event_id, deliveries FROM event_log ORDER BY event_id`;
    return rows.map((r) => [r.event_id, decodeDeliveries(r.deliveries).find((d) => d.targetId === target) ?? null]);
  };
  const before = await lines(B);
  const now = await jobs.now();
  await records.markPending((await missed.next(range(A, now), null, 100)).map((d) => ({ eventId: d.eventId, targetId: A, receivedAt: d.receivedAt })));
  t.equal(await missed.count(range(A, await jobs.now())), 0, 'A: nothing missed once handed over (pending)');
  t.same(await lines(B), before, 'B\'s lines untouched');
  t.same((await all(range(B, await jobs.now()), 10)).flat(), [id(0), id(2), id(5)], 'B still missed the same');
});

t.test('a target id that is not a number is refused before any query', async (t) => {
  const missed = new MissedDeliveryRepo(undefined as never);
  await t.rejects(missed.count({ workspaceId: '1', targetId: "1' OR 1=1", since: new Date(T0), cutoff: new Date(T0).toISOString() }), /not a target id/);
});
