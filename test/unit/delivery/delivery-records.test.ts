import t from 'tap';
import { DeliveryRecords } from '../../../src/delivery/delivery-records.js';
import type { DeliveryRowInput, DeliveryRecordRepo, EventRowInput } from '../../../src/storage/delivery-record-repo.js';

const silent = { warn() {} } as never;

/** A repository that records batches and can be told to fail or to hang. */
function fakeRepo() {
  const batches: Array<{ events: EventRowInput[]; deliveries: DeliveryRowInput[] }> = [];
  const state = { fail: 0, hold: null as Promise<void> | null, unmatched: 0 };
  const repo = {
    async writeBatch(events: EventRowInput[], deliveries: DeliveryRowInput[]) {
      if (state.hold) await state.hold;
      if (state.fail > 0) {
        state.fail--;
        throw new Error('db down');
      }
      batches.push({ events: [...events], deliveries: deliveries.map((d) => ({ ...d, attempts: [...d.attempts] })) });
      // As if no event row existed yet for the deliveries of this many writes.
      if (state.unmatched > 0) {
        state.unmatched--;
        return [...deliveries];
      }
      return [];
    },
  } as unknown as DeliveryRecordRepo;
  return { repo, batches, state };
}

const attempt = (status: number) => ({ at: new Date().toISOString(), status, durationMs: 1, error: null });
const base = { eventId: 'evt_1', targetId: '1', stream: 'g/tp', partition: 0, offset: 5n, receivedAt: 0 };
const event = (id: string): EventRowInput => ({ eventId: id, workspaceId: '1', queueName: 'q', eventType: null, groupKey: null, partitionKey: null, idempotencyKey: null, receivedAt: 0, partition: 0, offset: 0n, stream: 'g/tp', runId: null, targetIds: ['1'] });

t.test('writes in batches, merging the updates of one delivery', async (t) => {
  const { repo, batches } = fakeRepo();
  const log = new DeliveryRecords(repo, { flushMs: 20, maxBatch: 1000, maxBuffered: 10_000 }, silent);
  log.eventSeen(event('evt_1'));
  log.delivery({ ...base, status: 'retrying', attempt: attempt(503) });
  log.delivery({ ...base, status: 'delivered', attempt: attempt(200) });
  t.equal(batches.length, 0, 'nothing written synchronously');
  await new Promise((r) => setTimeout(r, 60));
  t.equal(batches.length, 1, 'one write for all of it');
  t.equal(batches[0]!.deliveries.length, 1);
  t.equal(batches[0]!.deliveries[0]!.status, 'delivered', 'the latest status');
  t.same(batches[0]!.deliveries[0]!.attempts.map((a) => a.status), [503, 200], 'every attempt, in order');
});

t.test('a full batch is written without waiting for the timer', async (t) => {
  const { repo, batches } = fakeRepo();
  const log = new DeliveryRecords(repo, { flushMs: 60_000, maxBatch: 3, maxBuffered: 10_000 }, silent);
  for (const id of ['a', 'b', 'c']) log.eventSeen(event(id));
  await new Promise((r) => setTimeout(r, 20));
  t.equal(batches.length, 1);
});

t.test('a failed write keeps its rows, ahead of newer ones, and is retried', async (t) => {
  const { repo, batches, state } = fakeRepo();
  state.fail = 1;
  const log = new DeliveryRecords(repo, { flushMs: 10, maxBatch: 1000, maxBuffered: 10_000 }, silent);
  log.delivery({ ...base, status: 'retrying', attempt: attempt(500) });
  await new Promise((r) => setTimeout(r, 25));
  log.delivery({ ...base, status: 'delivered', attempt: attempt(200) });
  await log.flush();
  await new Promise((r) => setTimeout(r, 50));
  const all = batches.flatMap((b) => b.deliveries);
  t.equal(all.at(-1)!.status, 'delivered');
  t.same(all.flatMap((d) => d.attempts.map((a) => a.status)), [500, 200], 'no attempt lost or reordered');
});

t.test('backlogged past maxBuffered; room() resolves once written', async (t) => {
  const { repo, state } = fakeRepo();
  let release!: () => void;
  state.hold = new Promise((r) => (release = r));
  const log = new DeliveryRecords(repo, { flushMs: 1, maxBatch: 2, maxBuffered: 4 }, silent);
  for (const id of ['a', 'b', 'c', 'd', 'e', 'f']) log.eventSeen(event(id));
  await new Promise((r) => setTimeout(r, 10));
  t.ok(log.backlogged, 'the database is stuck: backlogged');
  let roomy = false;
  const room = log.room().then(() => (roomy = true));
  t.notOk(roomy);
  state.hold = null;
  release();
  await room;
  t.ok(roomy);
  await log.flush();
  t.equal(log.buffered, 0);
});

t.test('a delivery is never written before its event: it waits while its event is still buffered', async (t) => {
  const { repo, batches } = fakeRepo();
  const log = new DeliveryRecords(repo, { flushMs: 60_000, maxBatch: 2, maxBuffered: 10_000 }, silent);
  log.eventSeen(event('a'));
  log.eventSeen(event('b'));
  log.eventSeen(event('evt_1'));
  log.delivery({ ...base, status: 'delivered', attempt: attempt(200) });
  await log.flush();
  await log.flush();
  t.same(batches[0]!.events.map((e) => e.eventId), ['a', 'b'], 'the first batch: two events');
  t.equal(batches[0]!.deliveries.length, 0, 'not the delivery of an event written later');
  t.same(batches[1]!.events.map((e) => e.eventId), ['evt_1']);
  t.same(batches[1]!.deliveries.map((d) => d.eventId), ['evt_1'], 'with its event');
});

t.test('a delivery whose event has no row yet is kept, ahead of newer updates, and written again', async (t) => {
  const { repo, batches, state } = fakeRepo();
  state.unmatched = 1;
  const log = new DeliveryRecords(repo, { flushMs: 60_000, maxBatch: 1000, maxBuffered: 10_000 }, silent);
  log.delivery({ ...base, status: 'retrying', attempt: attempt(500) });
  await log.flush();
  t.equal(log.buffered, 1, 'still buffered after a write that found no event row');
  log.delivery({ ...base, status: 'delivered', attempt: attempt(200) });
  await log.flush();
  t.equal(batches.length, 2);
  t.same(batches[1]!.deliveries.map((d) => [d.status, d.attempts.map((a) => a.status)]), [['delivered', [500, 200]]], 'merged, no attempt lost');
  t.equal(log.buffered, 0);
});

t.test('in a backlog, each batch carries the deliveries of its own events, with them', async (t) => {
  const { repo, batches } = fakeRepo();
  const log = new DeliveryRecords(repo, { flushMs: 60_000, maxBatch: 2, maxBuffered: 10_000 }, silent);
  // The second event fills a batch: a and b are being written when their deliveries come.
  for (const id of ['a', 'b', 'c', 'd', 'e']) log.eventSeen(event(id));
  for (const id of ['e', 'a', 'c', 'b']) log.delivery({ ...base, eventId: id, status: 'delivered', attempt: attempt(200) });
  t.equal(log.buffered, 7, 'three events, four deliveries');
  while (log.buffered > 0) await log.flush();
  t.same(
    batches.map((b) => [b.events.map((e) => e.eventId), b.deliveries.map((d) => d.eventId).sort()]),
    [[['a', 'b'], []], [['c', 'd'], ['a', 'b', 'c']], [['e'], ['e']]],
    'those of events still buffered in their event\'s batch, the others after their event',
  );
});

t.test('a failed write puts its events back with their deliveries; an update recorded meanwhile joins them in order', async (t) => {
  const { repo, batches, state } = fakeRepo();
  let release!: () => void;
  state.hold = new Promise((r) => (release = r));
  state.fail = 1;
  const log = new DeliveryRecords(repo, { flushMs: 60_000, maxBatch: 1000, maxBuffered: 10_000 }, silent);
  log.eventSeen(event('evt_1'));
  log.delivery({ ...base, status: 'retrying', attempt: attempt(503) });
  const failing = log.flush();
  log.delivery({ ...base, status: 'delivered', attempt: attempt(200) });
  state.hold = null;
  release();
  await failing;
  t.equal(batches.length, 0, 'nothing written yet');
  t.equal(log.buffered, 2, 'the event and ONE entry for its delivery');
  await log.flush();
  t.equal(batches.length, 1);
  t.same(batches[0]!.events.map((e) => e.eventId), ['evt_1']);
  t.same(batches[0]!.deliveries.map((d) => [d.eventId, d.status, d.attempts.map((a) => a.status)]), [['evt_1', 'delivered', [503, 200]]],
    'with its event, the latest status, both attempts in order');
});

t.test('a delivery recorded before its event was seen, found unmatched, joins the entry held by its event', async (t) => {
  const { repo, batches, state } = fakeRepo();
  let release!: () => void;
  state.hold = new Promise((r) => (release = r));
  state.unmatched = 1;
  const log = new DeliveryRecords(repo, { flushMs: 60_000, maxBatch: 1000, maxBuffered: 10_000 }, silent);
  log.delivery({ ...base, status: 'retrying', attempt: attempt(500) });
  const first = log.flush();
  // While that write is out: the event arrives, and a newer attempt of the same delivery.
  log.eventSeen(event('evt_1'));
  log.delivery({ ...base, status: 'delivered', attempt: attempt(200) });
  state.hold = null;
  release();
  await first;
  t.equal(log.buffered, 2, 'the event and one entry for its delivery');
  await log.flush();
  t.same(batches[1]!.events.map((e) => e.eventId), ['evt_1']);
  t.same(batches[1]!.deliveries.map((d) => [d.status, d.attempts.map((a) => a.status)]), [['delivered', [500, 200]]], 'merged, in order, with its event');
});
