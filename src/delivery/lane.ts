import { setTimeout as sleep } from 'node:timers/promises';
import { encodeEvent, decodeEvent } from '../event-log/event-record.js';
import type { Logger } from '../observability/logger.js';
import type { LaneRef, ParkedDeliveryRepo, ParkedRow, ParkedRowInput } from '../storage/parked-delivery-repo.js';
import type { DeliveryStep, StepResult } from './delivery-step.js';
import type { DueQueue } from './due-queue.js';
import { SETTLED, type Job } from './job.js';
import type { ParkWriter } from './park-writer.js';
import type { Semaphore } from './semaphore.js';

/** What the lanes of one partition share. */
export interface LaneContext {
  stream: string;
  partition: number;
  signal: AbortSignal;
  step: DeliveryStep;
  parkWriter: ParkWriter;
  parkRepo: ParkedDeliveryRepo;
  due: DueQueue<Lane>;
  drainSlots: Semaphore;
  /** Where a spilled lane waits to drain (per target: its drains wait for that target's permits). */
  spillSlots(targetId: string): Semaphore;
  holdInMemoryMs: number;
  pageSize: number;
  /** The lane has nothing left, in memory or parked: forget it. */
  onIdle(lane: Lane): void;
  log: Logger;
  now(): number;
}

/**
 * The deliveries of one partition key to one target, one after another
 * (docs/delivery.md#delivery-engine: per-key order per target; a failing event holds back only its
 * own lane). A lane is in one of three modes:
 *
 *            retry due soon: wait in memory
 *              ┌──────┐
 *              ▼      │        retry due later: head and queue written to Postgres,
 *   push ──► ACTIVE ──┴──────────────────────────────────► PARKED ◄───────────┐
 *              ▲        (their offsets may now be committed)  │ head due     │ retry due later
 *              │                                               ▼              │
 *              └──────────── no rows left ─────────────── DRAINING ───────────┘
 *                                                         rows read back page by page, in seq order
 *
 * While PARKED or DRAINING, new jobs of the lane are written behind the parked
 * ones instead of being held in memory, so order holds and memory stays flat
 * however long the receiver fails.
 *
 * A lane can also be SPILLED (spill(), asked by its partition when it is full
 * and the lane's target saturated): the jobs queued behind its head are
 * written to parking, the head too if it still waits for a flow permit, and
 * the lane goes on as a parked lane due at once. Its records stop holding the
 * partition, which fetches on for the other targets.
 */
export class Lane {
  private mode: 'active' | 'parked' | 'draining' = 'active';
  private readonly jobs: Job[] = [];
  private running = false;
  /** Parking writes of this lane not yet committed, and a count of those committed. */
  private parkInFlight = 0;
  private parkEpoch = 0;
  private parkWaiters: Array<() => void> = [];
  /** Aborted by spill(): the head gives up its wait for a flow permit. */
  private withdraw: AbortController | null = null;
  /** Parked by spill(), not by a retry: drains take a slot of the target's own. */
  private spilled = false;

  readonly ref: LaneRef;
  private readonly ctx: LaneContext;
  constructor(
    ref: LaneRef,
    ctx: LaneContext,
  ) {
    this.ref = ref;
    this.ctx = ctx;
  }

  /** Waits in memory: jobs not yet settled. */
  get held(): number {
    return this.jobs.length;
  }

  /** Parked in the database (or being drained from it), not running in memory. */
  get isParked(): boolean {
    return this.mode !== 'active';
  }

  get isIdle(): boolean {
    return this.mode === 'active' && !this.running && this.jobs.length === 0 && this.parkInFlight === 0;
  }

  /** A lane found parked in the database (on assignment, a redelivery, a sweep): wake it at `dueAt`. */
  adoptParked(dueAt: number): void {
    this.mode = 'parked';
    this.ctx.due.schedule(this, dueAt);
  }

  push(job: Job): void {
    if (this.mode !== 'active') return this.parkBehind(job);
    this.jobs.push(job);
    if (!this.running) void this.runActive();
  }

  /**
   * Moves this lane out of memory while its head runs: the jobs queued behind
   * the head are parked (they settle once written, so their offsets may be
   * committed) and later jobs park behind them; a head still waiting for its
   * target's permit gives its place up and parks too. A head already sending
   * finishes; then the lane drains from parking in order. Returns how many
   * queued jobs left memory.
   */
  spill(): number {
    // Allowed when parked but running: spilled before, its head now waits again (a retry held
    // in memory). Nothing in memory: the head is being parked for a retry already.
    if (!this.running || this.mode === 'draining' || this.jobs.length === 0) return 0;
    const queued = this.jobs.splice(1);
    this.mode = 'parked';
    this.spilled = true;
    if (queued.length > 0) {
      void this.writeParked(queued.map((job) => this.rowOf(job, null))).then((ok) => {
        if (ok) for (const job of queued) job.settle();
      });
    }
    this.withdraw?.abort();
    this.withdraw = null;
    return queued.length;
  }

  /** Called by the due queue when the parked head is due. */
  async wake(): Promise<void> {
    if (this.mode !== 'parked' || this.ctx.signal.aborted) return;
    this.mode = 'draining';
    const release = await (this.spilled ? this.ctx.spillSlots(this.ref.targetId) : this.ctx.drainSlots).acquire();
    try {
      await this.drain();
      this.spilled = false;
    } catch (err) {
      if (this.ctx.signal.aborted) return;
      // Most likely the database: keep the lane parked and look again shortly.
      this.ctx.log.warn({ err, lane: this.ref.laneKey }, 'parked lane could not be drained, will retry');
      this.mode = 'parked';
      this.ctx.due.schedule(this, this.ctx.now() + 2_000);
    } finally {
      release();
    }
  }

  private async runActive(): Promise<void> {
    this.running = true;
    try {
      while (this.jobs.length > 0 && !this.ctx.signal.aborted) {
        const job = this.jobs[0]!;
        this.withdraw ??= new AbortController();
        const step = await this.ctx.step.run(job, this.ctx.partition, this.ctx.signal, this.withdraw.signal);
        if (this.ctx.signal.aborted) return;
        if (step.kind === 'done') {
          this.jobs.shift();
          job.settle();
          continue;
        }
        if (step.kind === 'withdrawn') {
          // Spilled while waiting for a permit: the head parks, due now, ahead of what spill() parked.
          await this.parkAll(this.ctx.now());
          return;
        }
        if (await this.waitedInMemory(step)) continue;
        this.spilled = false; // parked for a retry now: a drain slot like any retry
        await this.parkAll(step.dueAt);
        return;
      }
      // Spilled while the head was sending: what was queued behind it is parked; drain it in order.
      if (this.mode === 'parked' && !this.ctx.signal.aborted) this.ctx.due.schedule(this, this.ctx.now());
    } catch (err) {
      if (!this.ctx.signal.aborted) this.ctx.log.error({ err, lane: this.ref.laneKey, eventId: this.jobs[0]?.record.id }, 'lane stopped unexpectedly');
    } finally {
      this.running = false;
      if (this.isIdle && !this.ctx.signal.aborted) this.ctx.onIdle(this);
    }
  }

  /** A retry due within holdInMemoryMs is waited for here; false when it is due later. */
  private async waitedInMemory(step: Extract<StepResult, { kind: 'retry' }>): Promise<boolean> {
    const wait = step.dueAt - this.ctx.now();
    if (wait > this.ctx.holdInMemoryMs) return false;
    if (wait > 0) await sleep(wait, undefined, { signal: this.ctx.signal }).catch(() => {});
    return true;
  }

  /** The head must wait long: write it (due at `dueAt`) and everything queued behind it. */
  private async parkAll(dueAt: number): Promise<void> {
    this.mode = 'parked';
    const jobs = this.jobs.splice(0);
    const rows = jobs.map((job, i) => this.rowOf(job, i === 0 ? dueAt : null));
    if (!(await this.writeParked(rows))) return;
    for (const job of jobs) job.settle();
    this.ctx.due.schedule(this, dueAt);
  }

  private parkBehind(job: Job): void {
    void this.writeParked([this.rowOf(job, null)]).then((ok) => {
      if (ok) job.settle();
    });
  }

  /** True once committed; false when the partition was revoked (the records stay uncommitted). */
  private async writeParked(rows: ParkedRowInput[]): Promise<boolean> {
    this.parkInFlight++;
    try {
      await this.ctx.parkWriter.write(rows);
      this.parkEpoch++;
      return !this.ctx.signal.aborted;
    } catch {
      return false;
    } finally {
      this.parkInFlight--;
      if (this.parkInFlight === 0) for (const wake of this.parkWaiters.splice(0)) wake();
    }
  }

  private async drain(): Promise<void> {
    let done: bigint[] = [];
    for (;;) {
      if (this.ctx.signal.aborted) return;
      const epoch = this.parkEpoch;
      const rows = await this.ctx.parkRepo.nextPage(this.ref, done, this.ctx.pageSize);
      done = [];
      if (rows.length === 0) {
        if (this.parkInFlight === 0 && this.parkEpoch === epoch) {
          // Nothing parked and nothing on its way to parking: back to memory.
          this.mode = 'active';
          if (this.isIdle) this.ctx.onIdle(this);
          return;
        }
        await new Promise<void>((resolve) => (this.parkInFlight === 0 ? resolve() : this.parkWaiters.push(resolve)));
        continue;
      }
      for (const row of rows) {
        const job = this.jobOf(row);
        for (;;) {
          const step = await this.ctx.step.run(job, this.ctx.partition, this.ctx.signal);
          if (this.ctx.signal.aborted) return;
          if (step.kind === 'done') {
            done.push(row.seq);
            break;
          }
          if (step.kind === 'withdrawn') continue; // not asked for: a drain passes no withdraw signal
          if (await this.waitedInMemory(step)) continue;
          await this.ctx.parkRepo.delete(this.ref, done);
          if (!(await this.writeParked([this.rowOf(job, step.dueAt)]))) return;
          this.mode = 'parked';
          this.ctx.due.schedule(this, step.dueAt);
          return;
        }
      }
    }
  }

  private jobOf(row: ParkedRow): Job {
    return {
      record: decodeEvent(row.record),
      encoded: row.record,
      seq: row.seq,
      targetId: this.ref.targetId,
      routed: null,
      routedAt: 0,
      attempts: row.attempts,
      firstAttemptAt: row.firstAttemptAt ? row.firstAttemptAt.getTime() : null,
      lastError: null,
      settle: SETTLED,
    };
  }

  private rowOf(job: Job, dueAt: number | null): ParkedRowInput {
    job.encoded ??= encodeEvent(job.record);
    return {
      ...this.ref,
      seq: job.seq,
      eventId: job.record.id,
      record: job.encoded,
      attempts: job.attempts,
      firstAttemptAt: job.firstAttemptAt === null ? null : new Date(job.firstAttemptAt),
      nextAttemptAt: dueAt === null ? null : new Date(dueAt),
      lastError: job.lastError,
    };
  }
}
