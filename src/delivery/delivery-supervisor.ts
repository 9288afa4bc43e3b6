import type { EventLogReader } from '../event-log/event-log.js';
import type { Logger } from '../observability/logger.js';
import { withinMs } from '../util/within-ms.js';
import { PartitionActor, type ActorServices } from './partition-actor.js';

/**
 * The longest the drain waits for its last offset commit. A broker answers one
 * in milliseconds; one that went silent held it for the client's request
 * timeouts and retries (minutes), so the drain ran out the shutdown budget and
 * the process was ended with code 1. Given up, the commit costs duplicates
 * (the next owner replays from the last commit that landed), never an event.
 */
const LAST_COMMIT_MS = 5_000;
/** The least it gets when the deliveries in flight used the drain's budget up: a broker that answers needs no more. */
const LAST_COMMIT_MIN_MS = 500;

export interface SupervisorOptions {
  maxPendingPerPartition: number;
  commitIntervalMs: number;
  holdInMemoryMs: number;
  pageSize: number;
  sweepMs: number;
  redeliveryPollMs: number;
}

/**
 * Runs this node's partition actors, commits their progress and hands them
 * the redelivery requests of their partitions. Commits are coalesced: at most
 * one per `commitIntervalMs`, carrying the newest commit point of every
 * partition that moved.
 */
export class DeliverySupervisor {
  private readonly actors = new Map<number, PartitionActor>();
  private readonly dirty = new Map<number, bigint>();
  private readonly committed = new Map<number, bigint>();
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();
  private redeliveryTimer: NodeJS.Timeout | null = null;
  private polling = false;
  /** Drained: no commit is scheduled any more (one the drain gave up on may still fail later). */
  private stopped = false;

  private readonly reader: EventLogReader;
  private readonly services: ActorServices;
  private readonly options: SupervisorOptions;
  private readonly log: Logger;
  constructor(
    reader: EventLogReader,
    services: ActorServices,
    options: SupervisorOptions,
    log: Logger,
  ) {
    this.reader = reader;
    this.services = services;
    this.options = options;
    this.log = log;
  }

  async start(): Promise<void> {
    await this.reader.start((partition) => {
      const actor = new PartitionActor(
        partition,
        this.services,
        {
          maxPending: this.options.maxPendingPerPartition,
          holdInMemoryMs: this.options.holdInMemoryMs,
          pageSize: this.options.pageSize,
          sweepMs: this.options.sweepMs,
          onProgress: (p, point) => this.progress(p, point),
        },
        this.log.child({ partition }),
      );
      const previous = this.actors.get(partition);
      previous?.revoke();
      this.actors.set(partition, actor);
      // A fresh owner starts from the group's committed offset: forget ours.
      this.committed.delete(partition);
      this.dirty.delete(partition);
      return actor;
    });
    this.redeliveryTimer = setInterval(() => void this.pollRedeliveries(), this.options.redeliveryPollMs);
    this.redeliveryTimer.unref();
  }

  /** Lanes in memory (active) and parked, over the partitions this node owns. */
  laneCounts(): { active: number; parked: number } {
    const counts = { active: 0, parked: 0 };
    for (const actor of this.actors.values()) if (!actor.revoked) actor.countLanes(counts);
    return counts;
  }

  /** Records waiting or in flight on this node, across partitions. */
  get pending(): number {
    let n = 0;
    for (const actor of this.actors.values()) if (!actor.revoked) n += actor.pending;
    return n;
  }

  /** Redelivery requests become parked lanes of the partition's owner, due at once. */
  private async pollRedeliveries(): Promise<void> {
    if (this.polling) return;
    const owned = [...this.actors.values()].filter((a) => !a.revoked).map((a) => a.partition);
    if (owned.length === 0) return;
    this.polling = true;
    try {
      const now = this.services.now();
      for (const lane of await this.services.parkRepo.claimRedeliveries(this.services.stream, owned)) {
        const actor = this.actors.get(lane.partition);
        // Claimed by a partition that was revoked meanwhile: the row is parked; its next owner loads it.
        if (actor && !actor.revoked) actor.adopt(lane.targetId, lane.laneKey, now);
      }
    } catch (err) {
      this.log.warn({ err }, 'redelivery poll failed');
    } finally {
      this.polling = false;
    }
  }

  private progress(partition: number, point: bigint): void {
    const actor = this.actors.get(partition);
    if (!actor || actor.revoked) return;
    if ((this.committed.get(partition) ?? -1n) >= point) return;
    this.dirty.set(partition, point);
    this.schedule();
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer ??= setTimeout(() => {
      this.timer = null;
      this.flushing = this.flushing.then(() => this.flush());
    }, this.options.commitIntervalMs);
  }

  private async flush(): Promise<void> {
    const batch = [...this.dirty].filter(([partition]) => {
      const actor = this.actors.get(partition);
      return actor !== undefined && !actor.revoked;
    });
    this.dirty.clear();
    if (batch.length === 0) return;
    try {
      // Every moved partition in one commit: one request per interval, not one per partition.
      await this.reader.commit(batch);
      for (const [partition, point] of batch) this.committed.set(partition, point);
    } catch (err) {
      // Usually a rebalance in progress: the next owner replays from the last
      // good commit, so a failed commit costs duplicates, never events.
      this.log.warn({ partitions: batch.map(([p]) => p), err }, 'offset commit failed');
      for (const [partition, point] of batch) if (!this.dirty.has(partition)) this.dirty.set(partition, point);
      this.schedule();
    }
  }

  /** Stops fetching, lets in-flight deliveries finish (up to `timeoutMs`), commits, stops. */
  async drain(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    this.reader.pause();
    if (this.redeliveryTimer) clearInterval(this.redeliveryTimer);
    await Promise.all([...this.actors.values()].map((a) => a.idle(timeoutMs)));
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    for (const actor of this.actors.values()) {
      const point = actor.commitPoint();
      if (point !== null && !actor.revoked) this.dirty.set(actor.partition, point);
    }
    // After the periodic commit in flight, never beside it: two in flight could land out of order.
    const commitMs = Math.max(LAST_COMMIT_MIN_MS, Math.min(LAST_COMMIT_MS, deadline - Date.now()));
    await withinMs(this.flushing.then(() => this.flush()), commitMs).catch(() => {
      this.log.warn({ waitedMs: commitMs }, 'the last offset commit was not answered in time: the next owner of these partitions sends what was delivered since the last commit again');
    });
    this.stopped = true;
    // Parked lanes and in-memory retries stop here; parked rows wait for the next owner.
    for (const actor of this.actors.values()) actor.revoke();
    await this.reader.stop();
  }
}
