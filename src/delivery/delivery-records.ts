import type { Logger } from '../observability/logger.js';
import type { AttemptEntry, DeliveryRowInput, DeliveryRecordRepo, EventRowInput } from '../storage/delivery-record-repo.js';
import { backoffDelay } from '../util/backoff.js';

export interface DeliveryRecordsOptions {
  flushMs: number;
  maxBatch: number;
  maxBuffered: number;
}

/**
 * Collects what delivery does (events seen, attempts, statuses) and writes it
 * in batches, never one row per attempt on the hot path. Updates of one
 * delivery within a batch are merged: its latest status, all its attempts.
 * If the database is slow, rows wait; past `maxBuffered` the partition actors
 * stop taking records (see `backlogged`) rather than grow without bound.
 */
export class DeliveryRecords {
  private events: EventRowInput[] = [];
  private deliveries = new Map<string, DeliveryRowInput>();
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> | null = null;
  private waiters: Array<() => void> = [];
  private failures = 0;

  constructor(
    private readonly repo: DeliveryRecordRepo,
    private readonly options: DeliveryRecordsOptions,
    private readonly log: Logger,
  ) {}

  get buffered(): number {
    return this.events.length + this.deliveries.size;
  }

  get backlogged(): boolean {
    return this.buffered >= this.options.maxBuffered;
  }

  eventSeen(event: EventRowInput): void {
    this.events.push(event);
    this.schedule();
  }

  delivery(update: Omit<DeliveryRowInput, 'attempts'> & { attempt?: AttemptEntry }): void {
    const key = `${update.eventId}\0${update.targetId}`;
    const prev = this.deliveries.get(key);
    if (prev) {
      prev.status = update.status;
      if (update.attempt) prev.attempts.push(update.attempt);
    } else {
      // Field by field rather than rest/spread: once per delivery, on the hot path.
      this.deliveries.set(key, {
        eventId: update.eventId,
        targetId: update.targetId,
        status: update.status,
        attempts: update.attempt ? [update.attempt] : [],
        stream: update.stream,
        partition: update.partition,
        offset: update.offset,
        receivedAt: update.receivedAt,
      });
    }
    this.schedule();
  }

  /** Resolves when the buffer is below its limit again. */
  room(): Promise<void> {
    if (!this.backlogged) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Writes everything buffered now (and waits for a write in progress). */
  async flush(): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    while (this.flushing) await this.flushing;
    if (this.buffered === 0) return;
    this.flushing = this.write();
    try {
      await this.flushing;
    } finally {
      this.flushing = null;
      if (this.buffered > 0) this.schedule();
    }
  }

  private schedule(): void {
    if (this.buffered >= this.options.maxBatch && !this.flushing) {
      if (this.timer) clearTimeout(this.timer);
      this.timer = null;
      void this.flush();
      return;
    }
    if (!this.timer && !this.flushing) {
      this.timer = setTimeout(() => {
        this.timer = null;
        void this.flush();
      }, this.failures > 0 ? backoffDelay(this.failures, { baseMs: this.options.flushMs, maxMs: 5_000 }) : this.options.flushMs);
      this.timer.unref();
    }
  }

  private async write(): Promise<void> {
    const events = this.events.splice(0, this.options.maxBatch);
    const deliveries: DeliveryRowInput[] = [];
    for (const [key, d] of this.deliveries) {
      if (deliveries.length >= this.options.maxBatch) break;
      deliveries.push(d);
      this.deliveries.delete(key);
    }
    try {
      await this.repo.writeBatch(events, deliveries);
      this.failures = 0;
    } catch (err) {
      if (this.failures++ === 0) this.log.warn({ err }, 'delivery records write failed, will retry');
      // Put the rows back in front of anything newer, keeping attempt order.
      this.events = [...events, ...this.events];
      const newer = this.deliveries;
      this.deliveries = new Map(deliveries.map((d) => [`${d.eventId}\0${d.targetId}`, d]));
      for (const [key, d] of newer) {
        const prev = this.deliveries.get(key);
        if (prev) {
          prev.status = d.status;
          prev.attempts.push(...d.attempts);
        } else this.deliveries.set(key, d);
      }
    } finally {
      if (!this.backlogged) for (const wake of this.waiters.splice(0)) wake();
    }
  }
}
