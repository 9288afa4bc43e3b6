/**
 * The distributed-traffic series of a producer (docs/api.md#producer-api-waas): counts of
 * deliveries to integration partners in fixed buckets, 60 s over the last
 * hour, 900 s over the last day, 3600 s over the last week.
 */
export type History = '1h' | '24h' | '7d';
export type Counter = 'accepted' | 'delivered' | 'failed';
export const COUNTERS: readonly Counter[] = ['accepted', 'delivered', 'failed'];

export const HISTORIES: Readonly<Record<History, { windowSeconds: number; bucketSeconds: number }>> = Object.freeze({
  '1h': { windowSeconds: 3_600, bucketSeconds: 60 },
  '24h': { windowSeconds: 86_400, bucketSeconds: 900 },
  '7d': { windowSeconds: 604_800, bucketSeconds: 3_600 },
});

export function isHistory(value: string): value is History {
  return Object.hasOwn(HISTORIES, value);
}

export interface SeriesPoint {
  /** Start of the bucket, ISO-8601 UTC. */
  t: string;
  accepted: number;
  delivered: number;
  failed: number;
}

/** Start (epoch seconds) of the bucket of `bucketSeconds` that holds `epochSeconds`. */
export function bucketStart(epochSeconds: number, bucketSeconds: number): number {
  return Math.floor(epochSeconds / bucketSeconds) * bucketSeconds;
}

/**
 * The bucket starts a series covers at `nowMs`, oldest first: the window's
 * worth of buckets ending with the (partial) current one.
 */
export function seriesBuckets(history: History, nowMs: number): number[] {
  const { windowSeconds, bucketSeconds } = HISTORIES[history];
  const last = bucketStart(Math.floor(nowMs / 1000), bucketSeconds);
  const n = windowSeconds / bucketSeconds;
  return Array.from({ length: n }, (_, i) => last - (n - 1 - i) * bucketSeconds);
}

/** Seconds a stored bucket must outlive its start so the longest series that shows it can read it. */
export function retentionSeconds(bucketSeconds: number): number {
  const history = Object.values(HISTORIES).find((h) => h.bucketSeconds === bucketSeconds);
  return (history?.windowSeconds ?? bucketSeconds) + bucketSeconds;
}
