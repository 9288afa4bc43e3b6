import type { LogEntry, PartitionHandler } from '../event-log/event-log.js';
import type { EventRecord } from '../event-log/event-record.js';
import type { DeliveryRecords } from './delivery-records.js';
import type { Logger } from '../observability/logger.js';
import type { RouteTable, RouteTarget } from '../routing/route-table.js';
import type { DeliveryRecordRepo } from '../storage/delivery-record-repo.js';
import type { ParkedDeliveryRepo } from '../storage/parked-delivery-repo.js';
import { backoffDelay } from '../util/backoff.js';
import type { DeliveryStep } from './delivery-step.js';
import { DueQueue } from './due-queue.js';
import type { Job } from './job.js';
import { Lane, type LaneContext } from './lane.js';
import { OffsetTracker } from './offset-tracker.js';
import type { ParkWriter } from './park-writer.js';
import type { Semaphore } from './semaphore.js';

/** Between failed loads of this partition's state: the partition waits, so not too long. */
const DATABASE_BACKOFF = { baseMs: 250, maxMs: 5_000 };

/** Spilling is looked at no more often than this while a partition is full. */
const SPILL_EVERY_MS = 100;
/** A target routed from a partition within this long shares it: a stall would hold it back. */
const SHARED_WITHIN_MS = 60_000;

export interface SpillServices {
  /** Whether a target has attempts waiting for a flow permit (src/delivery/flow/target-flows.ts). */
  saturated(targetId: string): boolean;
  /** Spilled lanes of one target draining at once; a target of its own, so they never hold back retries or other targets. */
  slots(targetId: string): Semaphore;
}

/** What every partition actor of a process shares. */
export interface ActorServices {
  /** '<consumer group>/<topic>' (see src/delivery/delivery-stream.ts). */
  stream: string;
  routes: RouteTable;
  step: DeliveryStep;
  deliveryRecords: DeliveryRecords;
  parkWriter: ParkWriter;
  parkRepo: ParkedDeliveryRepo;
  deliveryLog: DeliveryRecordRepo;
  drainSlots: Semaphore;
  /** Spilling the lanes of saturated targets (absent: never). */
  spill?: SpillServices;
  now(): number;
}

export interface ActorOptions {
  maxPending: number;
  holdInMemoryMs: number;
  pageSize: number;
  sweepMs: number;
  /** Called whenever the commit point may have moved. */
  onProgress: (partition: number, commitPoint: bigint) => void;
}

/**
 * Owns one log partition on this node. Entries arrive in offset order; each
 * record is routed to its targets and every (record, target) delivery goes to
 * the lane of (target, partition key), so order holds per key and target and a
 * failing delivery holds back only its own lane. Records without a partition
 * key have no order promise and get a lane of their own.
 *
 *   entries ─► route ─┬─► lane (t1, "a"): e1 ─► e4 ─► …   (one after another)
 *                     ├─► lane (t2, "a"): e1 ─► e4 ─► …
 *                     └─► lane (t1, "b"): e2 ─► …
 *
 * A record is finished when each of its deliveries is over or durably parked;
 * the commit point is the lowest record not finished. When more than
 * `maxPending` records are unfinished (or the delivery records are backed up),
 * `deliver` does not return, which stops the log fetching for this partition.
 *
 * A full partition whose lanes wait for a saturated target while another
 * target also routed from it could go on spills those lanes to parking
 * (Lane.spill): their records stop counting, the partition fetches on, and
 * the slow target's lanes drain from Postgres in order (docs/flow-control.md).
 *
 * On assignment the actor first loads the partition's parked lanes (so new
 * records of a parked lane queue behind it) and learns how far the delivery records
 * reaches: replayed records up to there are checked against it and deliveries
 * already over are not sent again.
 */
export class PartitionActor implements PartitionHandler {
  private readonly tracker = new OffsetTracker();
  private readonly lanes = new Map<string, Lane>();
  private readonly abort = new AbortController();
  private readonly due: DueQueue<Lane>;
  private readonly laneCtx: LaneContext;
  private drainWaiters: Array<() => void> = [];
  private ready: Promise<void> | null = null;
  /**
   * Fetched records may have been delivered already (a replay after a
   * rebalance or restart): true from the assignment until a batch none of
   * whose events the delivery records hold (see alreadyFinished).
   */
  private replaying = true;
  private sweepTimer: NodeJS.Timeout | null = null;
  /** Targets routed from this partition, and when last. */
  private readonly recentTargets = new Map<string, number>();
  private spillCheckedAt = 0;

  readonly partition: number;
  private readonly services: ActorServices;
  private readonly options: ActorOptions;
  private readonly log: Logger;
  constructor(
    partition: number,
    services: ActorServices,
    options: ActorOptions,
    log: Logger,
  ) {
    this.partition = partition;
    this.services = services;
    this.options = options;
    this.log = log;
    this.due = new DueQueue<Lane>((lane) => void lane.wake(), services.now);
    this.laneCtx = {
      stream: services.stream,
      partition,
      signal: this.abort.signal,
      step: services.step,
      parkWriter: services.parkWriter,
      parkRepo: services.parkRepo,
      due: this.due,
      drainSlots: services.drainSlots,
      spillSlots: services.spill ? (targetId) => services.spill!.slots(targetId) : () => services.drainSlots,
      holdInMemoryMs: options.holdInMemoryMs,
      pageSize: options.pageSize,
      onIdle: (lane) => {
        const key = laneMapKey(lane.ref.targetId, lane.ref.laneKey);
        if (this.lanes.get(key) === lane) this.lanes.delete(key);
      },
      log,
      now: services.now,
    };
  }

  get pending(): number {
    return this.tracker.pending;
  }

  get revoked(): boolean {
    return this.abort.signal.aborted;
  }

  /** Adds this actor's lanes to `counts` (read by the metrics gauges at scrape time). */
  countLanes(counts: { active: number; parked: number }): void {
    for (const lane of this.lanes.values()) {
      if (lane.isParked) counts.parked++;
      else counts.active++;
    }
  }

  /** Lanes this actor knows, parked ones included. */
  get laneCount(): number {
    return this.lanes.size;
  }

  async deliver(entries: LogEntry[], keepAlive: () => Promise<void>): Promise<void> {
    await this.services.routes.sync(); // these events were accepted before this fetch: route them on a view at least that new
    this.ready ??= this.initialize();
    await this.ready;
    if (this.revoked) return;
    const done = await this.alreadyFinished(entries);
    const seen = this.tracker.highestSeen;
    for (const entry of entries) {
      // After a rebalance the log replays from the committed offset; what this
      // actor already holds is running or done and must not start twice.
      if (seen !== null && entry.offset <= seen) continue;
      if (this.revoked) return;
      this.tracker.add(entry.offset);
      if (!entry.record) {
        this.log.error({ partition: this.partition, offset: String(entry.offset), err: entry.decodeError }, 'undecodable record skipped');
        this.finish(entry.offset);
        continue;
      }
      const targets = this.services.routes.cachedTargets(entry.record) ?? (await this.targetsOf(entry.record));
      if (targets === null) return;
      this.dispatch(entry, targets, done);
    }
    const { deliveryRecords } = this.services;
    while ((this.tracker.pending > this.options.maxPending || deliveryRecords.backlogged) && !this.revoked) {
      if (!deliveryRecords.backlogged) this.spillSaturated();
      const wake = deliveryRecords.backlogged ? deliveryRecords.room() : new Promise<void>((r) => this.drainWaiters.push(r));
      await Promise.race([wake, delay(2_000)]);
      await keepAlive();
    }
  }

  private dispatch(entry: LogEntry, targets: RouteTarget[], done: Set<string>): void {
    const record = entry.record!;
    this.services.deliveryRecords.eventSeen({
      eventId: record.id,
      workspaceId: record.workspaceId,
      queueName: record.queueName,
      eventType: record.eventType,
      groupKey: record.groupKey,
      partitionKey: record.partitionKey,
      idempotencyKey: record.idempotencyKey,
      receivedAt: record.receivedAt,
      partition: this.partition,
      offset: entry.offset,
      stream: this.services.stream,
      runId: record.sandbox?.runId ?? null,
      targetIds: targets.map((t) => t.id),
    });
    // `done` is empty but for the first batches after an assignment: skip building keys then.
    const todo = done.size === 0 ? targets : targets.filter((t) => !done.has(`${entry.offset}|${t.id}`));
    if (todo.length === 0) {
      this.finish(entry.offset);
      return;
    }
    let remaining = todo.length;
    const now = this.services.now();
    const laneKey = record.partitionKey !== null ? `k:${record.partitionKey}` : `o:${entry.offset}`;
    for (const target of todo) {
      this.recentTargets.set(target.id, now);
      let settled = false;
      const job: Job = {
        record,
        encoded: null,
        seq: entry.offset,
        targetId: target.id,
        routed: target,
        routedAt: now,
        attempts: 0,
        firstAttemptAt: null,
        lastError: null,
        settle: () => {
          if (settled) return;
          settled = true;
          if (--remaining === 0) this.finish(entry.offset);
        },
      };
      this.lane(target.id, laneKey).push(job);
    }
  }

  /**
   * The partition is full: when some of its targets are saturated (attempts
   * wait for their permits) and another target routed from it is not, spill
   * the saturated targets' lanes, so the slow target stops holding back the
   * others. With one target, or all saturated, nothing would move faster:
   * the records wait in the log, which costs nothing.
   */
  private spillSaturated(): void {
    const flows = this.services.spill;
    const now = this.services.now();
    if (!flows || now - this.spillCheckedAt < SPILL_EVERY_MS) return;
    this.spillCheckedAt = now;
    const saturated = new Set<string>();
    let another = false;
    for (const [id, at] of this.recentTargets) {
      if (now - at > SHARED_WITHIN_MS) this.recentTargets.delete(id);
      else if (flows.saturated(id)) saturated.add(id);
      else another = true;
    }
    if (saturated.size === 0 || !another) return;
    let lanes = 0;
    let jobs = 0;
    for (const lane of this.lanes.values()) {
      if (!saturated.has(lane.ref.targetId)) continue;
      const moved = lane.spill();
      lanes++;
      jobs += moved;
    }
    this.log.debug({ partition: this.partition, targets: saturated.size, lanes, jobs }, 'spilled the lanes of saturated targets to parking');
  }

  private lane(targetId: string, laneKey: string): Lane {
    const key = laneMapKey(targetId, laneKey);
    let lane = this.lanes.get(key);
    if (!lane) {
      lane = new Lane({ stream: this.services.stream, partition: this.partition, targetId, laneKey }, this.laneCtx);
      this.lanes.set(key, lane);
    }
    return lane;
  }

  /** A lane parked in the database that this actor does not run yet: wake it at `dueAt`. */
  adopt(targetId: string, laneKey: string, dueAt: number): void {
    if (this.revoked || this.lanes.has(laneMapKey(targetId, laneKey))) return;
    this.lane(targetId, laneKey).adoptParked(dueAt);
  }

  /** Resolves once nothing is pending or the timeout passes. */
  async idle(timeoutMs: number): Promise<boolean> {
    const until = Date.now() + timeoutMs;
    while (this.tracker.pending > 0 && Date.now() < until) {
      await Promise.race([new Promise<void>((r) => this.drainWaiters.push(r)), delay(100)]);
    }
    return this.tracker.pending === 0;
  }

  commitPoint(): bigint | null {
    return this.tracker.commitPoint();
  }

  revoke(): void {
    this.abort.abort();
    this.due.clear();
    this.lanes.clear();
    if (this.sweepTimer) clearInterval(this.sweepTimer);
    this.wakeWaiters();
  }

  private async initialize(): Promise<void> {
    const { stream, parkRepo, deliveryRecords } = this.services;
    for (let failures = 0; !this.revoked; failures++) {
      try {
        // What this process logged for the partition before (a previous actor) must be visible to the check.
        await deliveryRecords.flush();
        const now = this.services.now();
        for (const lane of await parkRepo.lanes(stream, this.partition)) {
          this.adopt(lane.targetId, lane.laneKey, lane.nextAttemptAt ? Math.max(now, lane.nextAttemptAt.getTime()) : now);
        }
        break;
      } catch (err) {
        if (failures === 0) this.log.warn({ err }, 'cannot load parked lanes yet, will retry');
        await delay(backoffDelay(failures, DATABASE_BACKOFF));
      }
    }
    // Rows a previous owner wrote after we loaded (it had not noticed the
    // rebalance yet) would otherwise wait forever: look for them now and then.
    this.sweepTimer = setInterval(() => void this.sweep(), this.options.sweepMs);
    this.sweepTimer.unref();
  }

  private async sweep(): Promise<void> {
    try {
      const now = this.services.now();
      for (const lane of await this.services.parkRepo.lanes(this.services.stream, this.partition)) {
        this.adopt(lane.targetId, lane.laneKey, lane.nextAttemptAt ? Math.max(now, lane.nextAttemptAt.getTime()) : now);
      }
    } catch (err) {
      this.log.warn({ err }, 'parked lane sweep failed');
    }
  }

  /**
   * `offset|targetId` of deliveries in this batch that the delivery records
   * say are over. The records of a partition are written in the order its
   * owners consumed it, so what they hold of a replay is a run from the
   * committed offset on: the first batch of which they hold no event is past
   * the replay, and the checks stop (looked up by event id and receive time,
   * each row's primary key: no index by offset is kept for this).
   */
  private async alreadyFinished(entries: LogEntry[]): Promise<Set<string>> {
    const done = new Set<string>();
    if (!this.replaying) return done;
    const events = entries.flatMap((e) => (e.record ? [{ eventId: e.record.id, receivedAt: e.record.receivedAt, offset: e.offset }] : []));
    if (events.length === 0) return done;
    for (let failures = 0; !this.revoked; failures++) {
      try {
        const { recorded, finished } = await this.services.deliveryLog.replayCheck(this.services.stream, events);
        if (recorded === 0) this.replaying = false; // past the replay: no more checks
        for (const row of finished) done.add(`${row.offset}|${row.targetId}`);
        return done;
      } catch (err) {
        if (failures === 0) this.log.warn({ err }, 'replay check failed, will retry');
        await delay(backoffDelay(failures, DATABASE_BACKOFF));
      }
    }
    return done;
  }

  /** The record's targets; waits out a database outage (order must hold), null when revoked meanwhile. */
  private async targetsOf(record: EventRecord): Promise<RouteTarget[] | null> {
    for (let failures = 0; ; failures++) {
      try {
        return await this.services.routes.targetsFor(record);
      } catch (err) {
        if (failures === 0) this.log.warn({ err, eventId: record.id }, 'route lookup failed, will retry');
        await delay(500);
        if (this.revoked) return null;
      }
    }
  }

  private finish(offset: bigint): void {
    this.tracker.finish(offset);
    const point = this.tracker.commitPoint();
    if (point !== null) this.options.onProgress(this.partition, point);
    this.wakeWaiters();
  }

  private wakeWaiters(): void {
    const waiters = this.drainWaiters;
    this.drainWaiters = [];
    for (const wake of waiters) wake();
  }
}

function laneMapKey(targetId: string, laneKey: string): string {
  return `${targetId}|${laneKey}`;
}

function delay(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms).unref());
}
