import type { Logger } from '../observability/logger.js';
import type { ParkedDeliveryRepo, ParkedRowInput } from '../storage/parked-delivery-repo.js';
import { backoffDelay } from '../util/backoff.js';

/** Between failed parking writes: lanes are held back meanwhile, so retry soon. */
const PARK_BACKOFF = { baseMs: 100, maxMs: 1_000 };

interface Waiting {
  rows: readonly ParkedRowInput[];
  resolve: () => void;
  reject: (err: Error) => void;
}

/**
 * Groups the parking writes of every lane of this process into few INSERTs:
 * a lane's `write` resolves once its rows are committed (only then may the
 * records count as durably scheduled and their offsets be committed). A
 * failed write is retried until it succeeds or the writer closes, so a
 * database outage holds lanes back instead of losing their records.
 */
export class ParkWriter {
  private queue: Waiting[] = [];
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private closed = false;

  private readonly repo: ParkedDeliveryRepo;
  private readonly flushMs: number;
  private readonly log: Logger;
  private readonly maxBatchRows: number;
  constructor(
    repo: ParkedDeliveryRepo,
    flushMs: number,
    log: Logger,
    maxBatchRows = 2000,
  ) {
    this.repo = repo;
    this.flushMs = flushMs;
    this.log = log;
    this.maxBatchRows = maxBatchRows;
  }

  write(rows: readonly ParkedRowInput[]): Promise<void> {
    if (this.closed) return Promise.reject(new Error('park writer closed'));
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ rows, resolve, reject });
      this.timer ??= setTimeout(() => this.kick(), this.flushMs);
    });
  }

  private kick(): void {
    this.timer = null;
    this.running ??= this.drain().finally(() => {
      this.running = null;
      if (this.queue.length > 0 && !this.closed) this.timer ??= setTimeout(() => this.kick(), this.flushMs);
    });
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0 && !this.closed) {
      const batch: Waiting[] = [];
      let rows = 0;
      while (this.queue.length > 0 && (batch.length === 0 || rows + this.queue[0]!.rows.length <= this.maxBatchRows)) {
        const next = this.queue.shift()!;
        batch.push(next);
        rows += next.rows.length;
      }
      for (let failures = 0; ; failures++) {
        try {
          await this.repo.upsert(dedupe(batch.flatMap((w) => w.rows)));
          for (const w of batch) w.resolve();
          break;
        } catch (err) {
          if (this.closed) {
            for (const w of batch) w.reject(err as Error);
            return;
          }
          if (failures === 0) this.log.warn({ err, rows }, 'parking deliveries failed, retrying');
          await new Promise((r) => setTimeout(r, backoffDelay(failures, PARK_BACKOFF)));
        }
      }
    }
  }

  /**
   * Writes what waits (for up to `graceMs` if the database is failing), then
   * refuses further writes; what could not be written stays unparked, so its
   * records stay uncommitted and are replayed.
   */
  async close(graceMs = 3_000): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    if (this.queue.length > 0) this.kick();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.running, new Promise((r) => (timer = setTimeout(r, graceMs)))]);
    clearTimeout(timer);
    this.closed = true;
    await this.running;
    for (const w of this.queue.splice(0)) w.reject(new Error('park writer closed'));
  }
}

/**
 * One statement may not touch a row twice: keep one row per key, the one with
 * the most attempts (a head's newest state beats a plain insert of it).
 */
function dedupe(rows: ParkedRowInput[]): ParkedRowInput[] {
  const byKey = new Map<string, ParkedRowInput>();
  for (const row of rows) {
    const key = `${row.stream}\0${row.partition}\0${row.targetId}\0${row.laneKey}\0${row.seq}`;
    const prev = byKey.get(key);
    if (!prev || row.attempts >= prev.attempts) byKey.set(key, row);
  }
  return byKey.size === rows.length ? rows : [...byKey.values()];
}
