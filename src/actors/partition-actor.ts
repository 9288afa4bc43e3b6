import type { LogEntry, PartitionHandler } from '../log/event-log.js';
import type { EventRecord } from '../log/event-record.js';
import type { Deliverer } from '../delivery/deliverer.js';
import type { Logger } from '../observability/logger.js';
import type { RouteTable } from '../routing/route-table.js';
import { OffsetTracker } from './offset-tracker.js';

export interface ActorOptions {
  maxPending: number;
  /** Called whenever the commit point may have moved. */
  onProgress: (partition: number, commitPoint: bigint) => void;
}

/**
 * Owns one log partition on this node. Entries arrive in offset order and are
 * split into lanes by partition key: a lane runs its records one after another
 * (per-key order), lanes run side by side (a slow key does not hold the others).
 * Records without a partition key have no order promise and run alone.
 *
 *   entries ──► lane "a": e1 ─► e4 ─► …   (sequential)
 *           ├─► lane "b": e2 ─► …
 *           └─► lane #3 : e3             (no key)
 *
 * When more than `maxPending` records wait, `deliver` does not return until
 * work drains, which stops the log from fetching more for this partition.
 */
export class PartitionActor implements PartitionHandler {
  private readonly tracker = new OffsetTracker();
  private readonly lanes = new Map<string, LogEntry[]>();
  private readonly abort = new AbortController();
  private drainWaiters: Array<() => void> = [];

  constructor(
    readonly partition: number,
    private readonly routes: RouteTable,
    private readonly deliverer: Deliverer,
    private readonly options: ActorOptions,
    private readonly log: Logger,
  ) {}

  get pending(): number {
    return this.tracker.pending;
  }

  get revoked(): boolean {
    return this.abort.signal.aborted;
  }

  async deliver(entries: LogEntry[], keepAlive: () => Promise<void>): Promise<void> {
    await this.routes.sync(); // these events were accepted before this fetch: route them on a view at least that new
    const seen = this.tracker.highestSeen;
    for (const entry of entries) {
      // After a rebalance the log replays from the committed offset; what this
      // actor already holds is running or done and must not start twice.
      if (seen !== null && entry.offset <= seen) continue;
      this.tracker.add(entry.offset);
      if (!entry.record) {
        this.log.error({ partition: this.partition, offset: String(entry.offset), err: entry.decodeError }, 'undecodable record skipped');
        this.finish(entry.offset);
        continue;
      }
      const laneKey = entry.record.partitionKey !== null ? `k:${entry.record.partitionKey}` : `o:${entry.offset}`;
      const lane = this.lanes.get(laneKey);
      if (lane) lane.push(entry);
      else {
        this.lanes.set(laneKey, [entry]);
        void this.runLane(laneKey);
      }
    }
    while (this.tracker.pending > this.options.maxPending && !this.revoked) {
      await Promise.race([new Promise<void>((r) => this.drainWaiters.push(r)), delay(2_000)]);
      await keepAlive();
    }
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
    this.lanes.clear();
    this.wakeWaiters();
  }

  private async runLane(laneKey: string): Promise<void> {
    const lane = this.lanes.get(laneKey)!;
    while (lane.length > 0 && !this.revoked) {
      const entry = lane[0]!;
      const done = await this.process(entry.record!);
      if (!done) return; // abandoned: left unfinished, so it is never committed
      lane.shift();
      this.finish(entry.offset);
    }
    if (this.lanes.get(laneKey) === lane) this.lanes.delete(laneKey);
  }

  /** Delivers a record to every target of its queue; false when abandoned. */
  private async process(record: EventRecord): Promise<boolean> {
    let targets;
    try {
      targets = await this.routes.targetsFor(record);
    } catch (err) {
      // The database is unreachable: keep the record and try again shortly.
      this.log.warn({ err: (err as Error).message }, 'route lookup failed, will retry');
      await delay(500);
      return this.revoked ? false : this.process(record);
    }
    const outcomes = await Promise.all(
      targets.filter((t) => !t.disabled).map((t) => this.deliverer.deliver(record, t, this.abort.signal)),
    );
    return !outcomes.includes('abandoned');
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

function delay(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms).unref());
}
