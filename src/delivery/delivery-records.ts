import type { Logger } from '../observability/logger.js';
import type { AttemptEntry, DeliveryRowInput, DeliveryRecordRepo, EventRowInput } from '../storage/delivery-record-repo.js';
import { backoffDelay } from '../util/backoff.js';

/** How long a delivery update waits for its event's row (see keepUnmatched). */
const UNMATCHED_KEEP_MS = 60_000;

export interface DeliveryRecordsOptions {
  flushMs: number;
  maxBatch: number;
  maxBuffered: number;
}

/**
 * Collects what delivery does (events seen, attempts, statuses) and writes it
 * in batches, never one row per attempt on the hot path. Updates of one
 * delivery within a batch are merged: its latest status, all its attempts.
 * `write` hands each batch of outcomes (events seen, delivery updates) to the
 * repository in one call.
 * If the database is slow, rows wait; past `maxBuffered` the partition actors
 * stop taking records (see `backlogged`) rather than grow without bound.
 */
export class DeliveryRecords {
  private events: EventRowInput[] = [];
  /**
   * Buffered events by id, each with the deliveries recorded since it was
   * seen: they are written with their event, in its INSERT (one statement per
   * event instead of an INSERT and a later merge), and never before it.
   */
  private held = new Map<string, DeliveryRowInput[] | null>();
  private heldDeliveries = 0;
  /** Deliveries whose event is not buffered (written already, or not seen yet), by key. */
  private deliveries = new Map<string, DeliveryRowInput>();
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> | null = null;
  private waiters: Array<() => void> = [];
  private failures = 0;
  /** Deliveries whose event had no row yet, since when (see keepUnmatched). */
  private readonly unmatchedSince = new Map<string, number>();

  private readonly repo: DeliveryRecordRepo;
  private readonly options: DeliveryRecordsOptions;
  private readonly log: Logger;
  constructor(
    repo: DeliveryRecordRepo,
    options: DeliveryRecordsOptions,
    log: Logger,
  ) {
    this.repo = repo;
    this.options = options;
    this.log = log;
  }

  get buffered(): number {
    return this.events.length + this.heldDeliveries + this.deliveries.size;
  }

  get backlogged(): boolean {
    return this.buffered >= this.options.maxBuffered;
  }

  eventSeen(event: EventRowInput): void {
    this.events.push(event);
    if (!this.held.has(event.eventId)) this.held.set(event.eventId, null);
    this.schedule();
  }

  delivery(update: Omit<DeliveryRowInput, 'attempts'> & { attempt?: AttemptEntry }): void {
    // One entry per delivery, wherever it waits: an update joins the one there is.
    const key = deliveryKey(update);
    const prev = this.deliveries.get(key) ?? this.heldEntry(update.eventId, update.targetId);
    if (prev) {
      prev.status = update.status;
      if (update.attempt) prev.attempts.push(update.attempt);
    } else {
      // Field by field rather than rest/spread: once per delivery, on the hot path.
      const row: DeliveryRowInput = {
        eventId: update.eventId,
        targetId: update.targetId,
        status: update.status,
        attempts: update.attempt ? [update.attempt] : [],
        stream: update.stream,
        partition: update.partition,
        offset: update.offset,
        receivedAt: update.receivedAt,
      };
      if (!this.hold(row)) this.deliveries.set(key, row);
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
    // A delivery goes in with its event or after it, never before (its row
    // is its event's, migration 090): those held by the events taken go with
    // them, those of events still buffered stay held.
    const deliveries: DeliveryRowInput[] = [];
    for (const e of events) {
      const list = this.held.get(e.eventId);
      if (list === undefined) continue;
      this.held.delete(e.eventId);
      if (list === null) continue;
      this.heldDeliveries -= list.length;
      for (const d of list) deliveries.push(d);
    }
    let others = 0;
    for (const [key, d] of this.deliveries) {
      if (others++ >= this.options.maxBatch) break;
      deliveries.push(d);
      this.deliveries.delete(key);
    }
    try {
      const unmatched = await this.repo.writeBatch(events, deliveries);
      this.failures = 0;
      if (this.unmatchedSince.size > 0) {
        const waiting = new Set(unmatched);
        for (const d of deliveries) if (!waiting.has(d)) this.unmatchedSince.delete(deliveryKey(d));
      }
      this.keepUnmatched(unmatched);
    } catch (err) {
      if (this.failures++ === 0) this.log.warn({ err }, 'delivery records write failed, will retry');
      // Put the rows back in front of anything newer, keeping attempt order.
      this.events = [...events, ...this.events];
      for (const e of events) if (!this.held.has(e.eventId)) this.held.set(e.eventId, null);
      this.putBack(deliveries);
    } finally {
      if (!this.backlogged) for (const wake of this.waiters.splice(0)) wake();
    }
  }

  /**
   * Deliveries whose event has no row: delivery may have recorded an attempt
   * of an event before its own consumer saw it (a redelivery of an event not
   * consumed yet), so they wait for it, up to UNMATCHED_KEEP_MS; an event past
   * retention never gets a row, and its updates are dropped then.
   */
  private keepUnmatched(unmatched: readonly DeliveryRowInput[]): void {
    if (unmatched.length === 0) return;
    const now = Date.now();
    const kept: DeliveryRowInput[] = [];
    for (const d of unmatched) {
      const key = deliveryKey(d);
      const since = this.unmatchedSince.get(key) ?? now;
      if (now - since >= UNMATCHED_KEEP_MS) {
        this.unmatchedSince.delete(key);
        this.log.debug({ eventId: d.eventId }, 'delivery record of an event without a row dropped');
        continue;
      }
      this.unmatchedSince.set(key, since);
      kept.push(d);
    }
    this.putBack(kept);
  }

  /**
   * Older rows of deliveries (a failed or unmatched write) back in the
   * buffer, ahead of what was recorded since: a newer entry of the same
   * delivery is folded into the older one (its status, its attempts after).
   */
  private putBack(older: readonly DeliveryRowInput[]): void {
    if (older.length === 0) return;
    const newer = this.deliveries;
    this.deliveries = new Map();
    for (const d of older) {
      const key = deliveryKey(d);
      const next = newer.get(key) ?? this.unhold(d.eventId, d.targetId);
      if (next) {
        newer.delete(key);
        d.status = next.status;
        d.attempts.push(...next.attempts);
      }
      if (!this.hold(d)) this.deliveries.set(key, d);
    }
    for (const [key, d] of newer) this.deliveries.set(key, d);
  }

  /** Attaches a delivery to its buffered event; false if its event is not buffered. */
  private hold(d: DeliveryRowInput): boolean {
    const list = this.held.get(d.eventId);
    if (list === undefined) return false;
    if (list === null) this.held.set(d.eventId, [d]);
    else list.push(d);
    this.heldDeliveries++;
    return true;
  }

  private heldEntry(eventId: string, targetId: string): DeliveryRowInput | undefined {
    const list = this.held.get(eventId);
    if (!list) return undefined;
    for (const d of list) if (d.targetId === targetId) return d;
    return undefined;
  }

  /** Takes a delivery's held entry out of its event's list. */
  private unhold(eventId: string, targetId: string): DeliveryRowInput | undefined {
    const list = this.held.get(eventId);
    if (!list) return undefined;
    const i = list.findIndex((d) => d.targetId === targetId);
    if (i < 0) return undefined;
    this.heldDeliveries--;
    return list.splice(i, 1)[0];
  }
}

function deliveryKey(d: { eventId: string; targetId: string }): string {
  return `${d.eventId}\0${d.targetId}`;
}
