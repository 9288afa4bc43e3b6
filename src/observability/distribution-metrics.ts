import type { Redis } from 'ioredis';
import { attemptChannel, type AttemptMessage } from './channels.js';
import {
  bucketStart, COUNTERS, HISTORIES, retentionSeconds, seriesBuckets,
  type Counter, type History, type SeriesPoint,
} from './distribution-series.js';

type Counts = Record<Counter, number>;

const RESOLUTIONS = [...new Set(Object.values(HISTORIES).map((h) => h.bucketSeconds))];

function bucketKey(prefix: string, producerTenantPublicId: string, bucketSeconds: number, start: number): string {
  return `${prefix}waas:metrics:${producerTenantPublicId}:${bucketSeconds}:${start}`;
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
 * Counts are summed in-process per producer and minute, then added to Redis
 * every `flushMs` (HINCRBY on one hash per bucket and resolution, with a TTL),
 * so every delivery node adds to the same series and the hot path never waits
 * on Redis.
 */
export class DistributionRecorder {
  private pending = new Map<string, Counts>();
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();
  private readonly listener = (message: unknown) => this.record(message as AttemptMessage);

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly flushMs: number,
    private readonly now: () => number = Date.now,
  ) {}

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

  /** Adds what was counted since the last flush to Redis. */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(() => this.flushNow());
    return this.flushing;
  }

  private async flushNow(): Promise<void> {
    if (this.pending.size === 0) return;
    const batch = this.pending;
    this.pending = new Map();
    const sums = new Map<string, { counts: Counts; ttl: number }>();
    for (const [key, counts] of batch) {
      const [tenant, minute] = key.split('\n') as [string, string];
      for (const resolution of RESOLUTIONS) {
        const redisKey = bucketKey(this.prefix, tenant, resolution, bucketStart(Number(minute), resolution));
        let sum = sums.get(redisKey);
        if (!sum) sums.set(redisKey, (sum = { counts: { accepted: 0, delivered: 0, failed: 0 }, ttl: retentionSeconds(resolution) }));
        for (const c of COUNTERS) sum.counts[c] += counts[c];
      }
    }
    const pipeline = this.redis.pipeline();
    for (const [redisKey, { counts, ttl }] of sums) {
      for (const c of COUNTERS) if (counts[c] > 0) pipeline.hincrby(redisKey, c, counts[c]);
      pipeline.expire(redisKey, ttl);
    }
    try {
      const results = await pipeline.exec();
      if (results?.some(([err]) => err)) throw new Error('metrics flush failed');
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
  redis: Redis,
  prefix: string,
  producerTenantPublicId: string,
  history: History,
  nowMs = Date.now(),
): Promise<{ history: History; bucketSeconds: number; series: SeriesPoint[] }> {
  const { bucketSeconds } = HISTORIES[history];
  const starts = seriesBuckets(history, nowMs);
  const pipeline = redis.pipeline();
  for (const start of starts) pipeline.hgetall(bucketKey(prefix, producerTenantPublicId, bucketSeconds, start));
  const results = (await pipeline.exec()) ?? [];
  const series = starts.map((start, i) => {
    const [err, value] = results[i] ?? [null, {}];
    if (err) throw err;
    const hash = (value ?? {}) as Record<string, string>;
    return {
      t: new Date(start * 1000).toISOString(),
      accepted: Number(hash.accepted ?? 0),
      delivered: Number(hash.delivered ?? 0),
      failed: Number(hash.failed ?? 0),
    };
  });
  return { history, bucketSeconds, series };
}
