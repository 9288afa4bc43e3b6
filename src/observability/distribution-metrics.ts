import type { CacheStore } from '../cache/cache-store.js';
import { attemptChannel, type AttemptMessage } from './channels.js';
import {
  bucketStart, COUNTERS, HISTORIES, retentionSeconds, seriesBuckets,
  type Counter, type History, type SeriesPoint,
} from './distribution-series.js';

type Counts = Record<Counter, number>;

const RESOLUTIONS = [...new Set(Object.values(HISTORIES).map((h) => h.bucketSeconds))];

function counterKey(producerTenantPublicId: string, bucketSeconds: number, start: number, counter: Counter): string {
  return `waas:metrics:${producerTenantPublicId}:${bucketSeconds}:${start}:${counter}`;
}

/**
 * Counts deliveries to integration partners (targets the route table reached
 * through a partner's receiving queue, `target.via`) from the delivery
 * attempt channel:
 *
 *   accepted  — the event was routed to the partner's target (first attempt)
 *   delivered — an attempt succeeded
 *   failed    — the delivery failed for good
 *
 * Counts are summed in-process per producer and minute, then added to the
 * shared cache every `flushMs` (one counter per bucket, resolution and kind,
 * with a TTL), so every delivery node adds to the same series and the hot path
 * never waits on the cache.
 */
export class DistributionRecorder {
  private pending = new Map<string, Counts>();
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();
  private readonly listener = (message: unknown) => this.record(message as AttemptMessage);

  private readonly cache: CacheStore;
  private readonly flushMs: number;
  private readonly now: () => number;
  constructor(
    cache: CacheStore,
    flushMs: number,
    now: () => number = Date.now,
  ) {
    this.cache = cache;
    this.flushMs = flushMs;
    this.now = now;
  }

  start(): void {
    attemptChannel.subscribe(this.listener);
    this.timer = setInterval(() => void this.flush(), this.flushMs);
    this.timer.unref();
  }

  record(message: AttemptMessage): void {
    const via = message.target.via;
    if (!via) return;
    const minute = bucketStart(Math.floor(this.now() / 1000), 60);
    const key = `${via.producerTenantPublicId}\n${minute}`;
    let counts = this.pending.get(key);
    if (!counts) this.pending.set(key, (counts = { accepted: 0, delivered: 0, failed: 0 }));
    if (message.attempt === 1) counts.accepted++;
    if (message.outcome === 'delivered') counts.delivered++;
    else if (message.outcome === 'failed') counts.failed++;
  }

  /** Adds what was counted since the last flush to the shared counters. */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(() => this.flushNow());
    return this.flushing;
  }

  private async flushNow(): Promise<void> {
    if (this.pending.size === 0) return;
    const batch = this.pending;
    this.pending = new Map();
    const sums = new Map<string, { by: number; ttl: number }>();
    for (const [key, counts] of batch) {
      const [tenant, minute] = key.split('\n') as [string, string];
      for (const resolution of RESOLUTIONS) {
        const start = bucketStart(Number(minute), resolution);
        for (const c of COUNTERS) {
          if (counts[c] === 0) continue;
          const key = counterKey(tenant, resolution, start, c);
          const sum = sums.get(key);
          if (sum) sum.by += counts[c];
          else sums.set(key, { by: counts[c], ttl: retentionSeconds(resolution) });
        }
      }
    }
    try {
      // Concurrent calls: the Redis adapter pipelines them into one round trip.
      await Promise.all([...sums].map(([key, { by, ttl }]) => this.cache.incr(key, by, ttl * 1000)));
    } catch {
      // Keep the counts for the next flush rather than lose them (a partial
      // failure may add some twice: these are metrics, not money).
      for (const [key, counts] of batch) {
        const current = this.pending.get(key);
        if (!current) this.pending.set(key, counts);
        else for (const c of COUNTERS) current[c] += counts[c];
      }
    }
  }

  async stop(): Promise<void> {
    attemptChannel.unsubscribe(this.listener);
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.flush();
  }
}

/** Reads a producer's series: every bucket of the window, zero where nothing was counted. */
export async function readDistributionSeries(
  cache: CacheStore,
  producerTenantPublicId: string,
  history: History,
  nowMs = Date.now(),
): Promise<{ history: History; bucketSeconds: number; series: SeriesPoint[] }> {
  const { bucketSeconds } = HISTORIES[history];
  const starts = seriesBuckets(history, nowMs);
  const keys = starts.flatMap((start) => COUNTERS.map((c) => counterKey(producerTenantPublicId, bucketSeconds, start, c)));
  const values = await cache.getCounters(keys);
  const series = starts.map((start, i) => {
    const at = (c: Counter) => values[i * COUNTERS.length + COUNTERS.indexOf(c)] ?? 0;
    return { t: new Date(start * 1000).toISOString(), accepted: at('accepted'), delivered: at('delivered'), failed: at('failed') };
  });
  return { history, bucketSeconds, series };
}
