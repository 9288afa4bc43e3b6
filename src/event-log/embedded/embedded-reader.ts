import type { Logger } from '../../observability/logger.js';
import type { EventLogReader, GroupMembership, LogEntry, PartitionHandler, PartitionLag } from '../event-log.js';
import { rebalanceChannel } from '../../observability/channels.js';
import { decodeEvent } from '../event-record.js';
import type { EmbeddedStore } from './embedded-store.js';

export interface EmbeddedReaderOptions {
  group: string;
  batchSize: number;
  /** Poll interval when idle (appends from this process also wake it at once). */
  pollMs: number;
  retentionMs: number;
}

/**
 * Consumes every partition of the embedded log on this node (single-node: the
 * one consumer of its group owns all partitions). Each partition has its own
 * loop: read a batch from the resume point, hand it to the partition's actor
 * (which may hold it back: backpressure), move on. Commits record where the
 * group resumes after a restart; retention deletes committed records older
 * than `retentionMs`.
 */
export class EmbeddedReader implements EventLogReader {
  private running = false;
  private paused = false;
  private readonly wakers = new Map<number, () => void>();
  private readonly handlers = new Map<number, PartitionHandler>();
  private loops: Promise<void>[] = [];
  private unsubscribe: (() => void) | null = null;
  private retentionTimer: NodeJS.Timeout | null = null;

  private readonly store: EmbeddedStore;
  private readonly options: EmbeddedReaderOptions;
  private readonly log: Logger;
  constructor(
    store: EmbeddedStore,
    options: EmbeddedReaderOptions,
    log: Logger,
  ) {
    this.store = store;
    this.options = options;
    this.log = log;
  }

  async start(handlerFor: (partition: number) => PartitionHandler): Promise<void> {
    this.running = true;
    this.unsubscribe = this.store.onAppend((p) => this.wakers.get(p)?.());
    for (let p = 0; p < this.store.partitions; p++) {
      const handler = handlerFor(p);
      this.handlers.set(p, handler);
      this.loops.push(this.consume(p, handler));
    }
    // Once a minute, or a quarter of a short retention (a few minutes in tests and soaks).
    this.retentionTimer = setInterval(() => this.sweep(), Math.max(1_000, Math.min(60_000, this.options.retentionMs / 4)));
    this.retentionTimer.unref();
    if (rebalanceChannel.hasSubscribers) rebalanceChannel.publish({ partitions: this.store.partitions });
    this.log.info({ partitions: this.store.partitions }, 'partitions assigned (embedded log)');
  }

  private async consume(partition: number, handler: PartitionHandler): Promise<void> {
    let position = this.store.commits.get([this.options.group, partition]) ?? 0;
    while (this.running) {
      if (this.paused) {
        await this.idle(partition);
        continue;
      }
      const entries: LogEntry[] = [];
      for (const { key, value } of this.store.events.getRange({
        start: [partition, position],
        end: [partition, Number.MAX_SAFE_INTEGER],
        limit: this.options.batchSize,
      })) {
        const entry: LogEntry = { partition, offset: BigInt(key[1]), record: null };
        try {
          entry.record = decodeEvent(value);
        } catch (err) {
          entry.decodeError = (err as Error).message;
        }
        entries.push(entry);
      }
      if (entries.length === 0) {
        await this.idle(partition);
        continue;
      }
      try {
        await handler.deliver(entries, async () => {});
      } catch (err) {
        this.log.error({ partition, err }, 'partition handler failed; retrying the batch');
        await this.idle(partition);
        continue;
      }
      position = Number(entries[entries.length - 1]!.offset) + 1;
    }
  }

  /** Waits for an append to this partition or the poll interval. */
  private idle(partition: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, this.options.pollMs);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wakers.set(partition, done);
    });
  }

  async commit(points: ReadonlyArray<readonly [partition: number, nextOffset: bigint]>): Promise<void> {
    // Puts of one turn share one LMDB write transaction.
    await Promise.all(points.map(([partition, nextOffset]) => this.store.commits.put([this.options.group, partition], Number(nextOffset))));
  }

  lag(): PartitionLag[] {
    const lags: PartitionLag[] = [];
    for (const partition of this.handlers.keys()) {
      const committed = this.store.commits.get([this.options.group, partition]) ?? 0;
      lags.push({ partition, lag: BigInt(Math.max(0, this.store.endOffset(partition) - committed)) });
    }
    return lags;
  }

  pause(): void {
    this.paused = true;
  }

  /** The one consumer of its group on this machine: a member from start() to stop(). */
  membership(): GroupMembership {
    return this.running ? { joined: true, partitions: this.handlers.size } : { joined: false, partitions: 0, error: 'not consuming' };
  }

  /** Deletes records the group has finished that are older than the retention. */
  private sweep(): void {
    const cutoff = Date.now() - this.options.retentionMs;
    for (let p = 0; p < this.store.partitions; p++) {
      const committed = this.store.commits.get([this.options.group, p]) ?? 0;
      for (const { key, value } of this.store.events.getRange({ start: [p, 0], end: [p, committed] })) {
        let receivedAt = 0;
        try {
          receivedAt = decodeEvent(value).receivedAt;
        } catch {
          // undecodable and already committed past: remove it
        }
        if (receivedAt >= cutoff) break;
        void this.store.events.remove(key);
      }
    }
  }

  async stop(): Promise<void> {
    this.running = false;
    // Revoke first: a handler holding a batch back (backpressure) lets go.
    for (const handler of this.handlers.values()) handler.revoke();
    this.handlers.clear();
    for (const wake of this.wakers.values()) wake();
    await Promise.allSettled(this.loops);
    this.unsubscribe?.();
    if (this.retentionTimer) clearInterval(this.retentionTimer);
    await this.store.release();
  }
}
