import t from 'tap';
import { Lane, type LaneContext } from '../../../src/delivery/lane.js';
import { DueQueue } from '../../../src/delivery/due-queue.js';
import { ParkWriter } from '../../../src/delivery/park-writer.js';
import { Semaphore } from '../../../src/delivery/semaphore.js';
import type { DeliveryStep, StepResult } from '../../../src/delivery/delivery-step.js';
import type { Job } from '../../../src/delivery/job.js';
import { MemoryParkedRepo, record, silentLog, until } from '../../helpers/lane-fakes.js';

/**
 * A lane against an in-memory parking store and a scripted step: each event
 * id maps to the outcomes of its attempts, in order ('ok', or a retry after N ms).
 */
function setup(script: Record<string, Array<'ok' | number>>, opts: { holdInMemoryMs?: number; pageSize?: number } = {}) {
  const repo = new MemoryParkedRepo();
  const attempts: string[] = [];
  const settled: string[] = [];
  const abort = new AbortController();
  const spillSlots = new Semaphore(4);
  let idle = 0;
  /** Event ids whose next attempt waits for a permit until released or withdrawn. */
  const gated = new Map<string, () => void>();
  /** Event ids whose attempt, once sent, waits for the test to let the answer in. */
  const sending = new Map<string, { promise: Promise<void>; answer: () => void }>();
  const step = {
    async run(job: Job, _partition: number, _signal: AbortSignal, withdraw?: AbortSignal): Promise<StepResult> {
      if (gated.has(job.record.id)) {
        const granted = await new Promise<boolean>((resolve) => {
          gated.set(job.record.id, () => resolve(true));
          withdraw?.addEventListener('abort', () => resolve(false), { once: true });
        });
        gated.delete(job.record.id);
        if (!granted) return { kind: 'withdrawn' };
      }
      attempts.push(job.record.id);
      const answer = sending.get(job.record.id);
      if (answer) await answer.promise;
      job.attempts++;
      job.firstAttemptAt ??= Date.now();
      const next = script[job.record.id]?.shift() ?? 'ok';
      return next === 'ok' ? { kind: 'done', status: 'delivered' } : { kind: 'retry', dueAt: Date.now() + next };
    },
  } as unknown as DeliveryStep;
  const ref = { stream: 'g/tp', partition: 0, targetId: '7', laneKey: 'k:k' };
  const ctx: LaneContext = {
    stream: 'g/tp',
    partition: 0,
    signal: abort.signal,
    step,
    parkWriter: new ParkWriter(repo.asRepo(), 1, silentLog),
    parkRepo: repo.asRepo(),
    due: new DueQueue<Lane>((lane) => void lane.wake()),
    drainSlots: new Semaphore(4),
    spillSlots: () => spillSlots,
    holdInMemoryMs: opts.holdInMemoryMs ?? 50,
    pageSize: opts.pageSize ?? 2,
    onIdle: () => idle++,
    log: silentLog,
    now: Date.now,
  };
  const lane = new Lane(ref, ctx);
  let seq = 0n;
  const push = (id: string) =>
    lane.push({ record: record(id), encoded: null, seq: seq++, targetId: '7', routed: null, routedAt: 0, attempts: 0, firstAttemptAt: null, lastError: null, settle: () => settled.push(id) });
  /** The next attempt of `id` waits for a permit; returns the grant. */
  const gate = (id: string) => gated.set(id, () => {});
  const grant = (id: string) => gated.get(id)!();
  const holdAnswer = (id: string) => {
    let answer!: () => void;
    const promise = new Promise<void>((r) => (answer = r));
    sending.set(id, { promise, answer });
    return answer;
  };
  return { lane, repo, attempts, settled, abort, push, ref, idle: () => idle, gate, grant, gated, holdAnswer, ctx };
}

t.test('jobs run one after another and settle in order', async (t) => {
  const s = setup({});
  for (const id of ['a', 'b', 'c']) s.push(id);
  await until(() => s.settled.length === 3);
  t.same(s.attempts, ['a', 'b', 'c']);
  t.same(s.settled, ['a', 'b', 'c']);
  await until(() => s.idle() === 1);
  t.equal(s.repo.upserts, 0, 'nothing was parked');
});

t.test('a retry due soon is waited for in memory, holding the jobs behind it', async (t) => {
  const s = setup({ a: [20, 20, 'ok'] });
  s.push('a');
  s.push('b');
  await until(() => s.settled.length === 2);
  t.same(s.attempts, ['a', 'a', 'a', 'b']);
  t.equal(s.repo.upserts, 0);
});

t.test('a retry due later parks the head and everything behind it; they settle; later jobs park behind; all drain in order', async (t) => {
  const s = setup({ a: [300, 'ok'] }, { pageSize: 2 });
  s.push('a');
  s.push('b');
  s.push('c');
  await until(() => s.settled.length === 3);
  t.same(s.attempts, ['a'], 'only the head was attempted');
  t.same(s.repo.laneRows(s.ref).map((r) => r.eventId), ['a', 'b', 'c'], 'all three parked');
  t.same(s.repo.laneRows(s.ref).map((r) => [r.attempts, r.nextAttemptAt !== null]), [[1, true], [0, false], [0, false]], 'only the head is due');
  s.push('d');
  s.push('e');
  await until(() => s.settled.length === 5);
  t.same(s.repo.laneRows(s.ref).map((r) => r.eventId), ['a', 'b', 'c', 'd', 'e'], 'later jobs are parked behind, not held in memory');
  t.equal(s.lane.held, 0);
  await until(() => s.attempts.length === 6, 3_000);
  t.same(s.attempts, ['a', 'a', 'b', 'c', 'd', 'e'], 'drained in order, page after page');
  await until(() => s.repo.rows.size === 0 && s.idle() === 1);
  t.pass('the lane is empty and forgotten');
  s.push('f');
  await until(() => s.settled.length === 6);
  t.same(s.attempts.at(-1), 'f', 'and runs in memory again');
});

t.test('a row failing again while draining is re-parked with its attempts; finished rows are deleted', async (t) => {
  const s = setup({ b: [300, 300, 'ok'] }, { pageSize: 10 });
  s.push('a');
  s.push('b');
  s.push('c');
  await until(() => s.attempts.length === 2);
  await until(() => s.repo.laneRows(s.ref).length === 2);
  await until(() => s.attempts.length === 3, 2_000);
  await until(() => s.repo.laneRows(s.ref)[0]?.attempts === 2);
  t.same(s.repo.laneRows(s.ref).map((r) => r.eventId), ['b', 'c']);
  await until(() => s.repo.rows.size === 0, 3_000);
  t.same(s.attempts, ['a', 'b', 'b', 'b', 'c']);
});

t.test('parking waits out a database outage; nothing settles before it is written', async (t) => {
  const s = setup({ a: [5_000, 'ok'] });
  s.repo.failNext = 2;
  s.push('a');
  s.push('b');
  await until(() => s.attempts.length === 1);
  await new Promise((r) => setTimeout(r, 50));
  t.same(s.settled, [], 'not settled while the write fails');
  await until(() => s.settled.length === 2, 3_000);
  t.same(s.repo.laneRows(s.ref).map((r) => r.eventId), ['a', 'b']);
  s.abort.abort();
});

t.test('a revoked lane stops: nothing more is attempted or settled', async (t) => {
  const s = setup({ a: [200, 'ok'] });
  s.push('a');
  s.push('b');
  await until(() => s.settled.length === 2);
  s.abort.abort();
  await new Promise((r) => setTimeout(r, 400));
  t.same(s.attempts, ['a'], 'the parked head is not woken after revocation');
  t.equal(s.repo.rows.size, 2, 'its rows stay for the next owner');
});

t.test('a lane adopted from the database drains when due', async (t) => {
  const s = setup({});
  // Seed rows as a previous owner would have left them.
  const { encodeEvent } = await import('../../../src/event-log/event-record.js');
  await s.repo.upsert(['p', 'q'].map((id, i) => ({ ...s.ref, seq: BigInt(i), eventId: id, record: encodeEvent(record(id)), attempts: i === 0 ? 3 : 0, firstAttemptAt: new Date(), nextAttemptAt: i === 0 ? new Date() : null, lastError: null })));
  s.lane.adoptParked(Date.now() + 20);
  await until(() => s.repo.rows.size === 0);
  t.same(s.attempts, ['p', 'q']);
  t.same(s.settled, [], 'rows parked earlier were settled by their first owner');
});

t.test('spilled while the head waits for a permit: the head and the queue park in order and settle; the lane drains them in order', async (t) => {
  const s = setup({}, { pageSize: 2 });
  s.gate('a');
  for (const id of ['a', 'b', 'c']) s.push(id);
  await until(() => s.gated.size === 1 && s.gated.get('a') !== undefined);
  t.equal(s.lane.spill(), 2, 'the two queued behind the head left memory');
  s.push('d');
  await until(() => s.settled.length === 4);
  t.same(s.settled.slice().sort(), ['a', 'b', 'c', 'd'], 'all settled without an attempt: their offsets may be committed');
  t.equal(s.lane.held, 0, 'nothing held in memory');
  await until(() => s.repo.rows.size === 0, 3_000);
  t.same(s.attempts, ['a', 'b', 'c', 'd'], 'drained from parking in order, the head first');
  t.equal(s.repo.laneRows(s.ref).length, 0);
});

t.test('spilled while the head is sending: it finishes in memory, the queue drains after it in order', async (t) => {
  const s = setup({}, { pageSize: 10 });
  const answer = s.holdAnswer('a');
  for (const id of ['a', 'b', 'c']) s.push(id);
  await until(() => s.attempts.length === 1);
  t.equal(s.lane.spill(), 2, 'the two behind the sending head left memory');
  await until(() => s.settled.length === 2);
  t.same(s.settled, ['b', 'c'], 'the queued ones settle once parked; the head is still out');
  s.push('d');
  await until(() => s.settled.length === 3);
  t.notOk(s.settled.includes('a'), 'd parked behind them and settled; the head has not answered yet');
  answer();
  await until(() => s.settled.length === 4 && s.repo.rows.size === 0 && s.attempts.length === 4, 3_000);
  t.same(s.attempts, ['a', 'b', 'c', 'd'], 'the head once, then the parked ones in order');
});

t.test('a spilled lane drains on a slot of its target, not on the retry drain slots', async (t) => {
  const s = setup({}, { pageSize: 10 });
  // Every retry drain slot is taken (retries of other lanes waiting long): a spilled lane must not wait for them.
  const held = await Promise.all([1, 2, 3, 4].map(() => s.ctx.drainSlots.acquire()));
  s.gate('a');
  s.push('a');
  s.push('b');
  await until(() => s.gated.has('a'));
  s.lane.spill();
  await until(() => s.repo.rows.size === 0 && s.attempts.length === 2, 3_000);
  t.same(s.attempts, ['a', 'b']);
  for (const release of held) release();
});
