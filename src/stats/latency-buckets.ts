/**
 * The accept→deliver latency histogram of a rollup row (migration 100): fixed
 * log-scale buckets, √2 apart, from 1 ms to about 25 days.
 *
 *   index 0        [0, 1) ms
 *   index i ≥ 1    [2^((i-1)/2), 2^(i/2)) ms
 *   index 63       everything from 2^31 ms (≈ 24.9 days) up
 *
 * Why fixed buckets: they add up. A minute of one queue and an hour of ten
 * queues are the same array summed, in SQL (sum(latency[i])) or here, so any
 * window and any set of queues gets its quantiles without keeping samples.
 * Why log scale: latencies run from a millisecond (a receiver next door) to
 * days (an event retried until its horizon); equal steps in log space give the
 * same relative precision everywhere. Why √2: a quantile read as the geometric
 * middle of its bucket is off by at most 2^¼ − 1 ≈ 19 %, plenty for a chart,
 * with 64 counters (≈ 260 bytes a row when all are used; trailing zeros are
 * not stored, and typical traffic fills a dozen).
 */
export const LATENCY_BUCKETS = 64;

/** The bucket of a latency in milliseconds. */
export function latencyBucket(ms: number): number {
  if (!(ms >= 1)) return 0;
  const i = 1 + Math.floor(2 * Math.log2(ms));
  return i < LATENCY_BUCKETS ? i : LATENCY_BUCKETS - 1;
}

/** [lower, upper) bounds of bucket `i` in ms (the last one's upper bound is Infinity). */
export function bucketBounds(i: number): [number, number] {
  if (i <= 0) return [0, 1];
  const upper = i >= LATENCY_BUCKETS - 1 ? Infinity : 2 ** (i / 2);
  return [2 ** ((i - 1) / 2), upper];
}

/**
 * The q-quantile (0 < q ≤ 1) of a histogram, in ms: the geometric middle of
 * the bucket holding it (half a millisecond for the first, the lower bound of
 * the open-ended last); null when the histogram is empty.
 */
export function latencyQuantile(counts: ArrayLike<number>, q: number): number | null {
  let total = 0;
  for (let i = 0; i < counts.length; i++) total += counts[i]!;
  if (total === 0) return null;
  const rank = Math.max(1, Math.ceil(q * total));
  let seen = 0;
  for (let i = 0; i < counts.length; i++) {
    seen += counts[i]!;
    if (seen >= rank) {
      if (i === 0) return 0.5;
      const [lower, upper] = bucketBounds(i);
      return upper === Infinity ? lower : Math.sqrt(lower * upper);
    }
  }
  return null;
}

/** The histogram without its trailing zeros (what a row stores). */
export function trimmed(counts: ArrayLike<number>): number[] {
  let end = counts.length;
  while (end > 0 && counts[end - 1] === 0) end--;
  return Array.from({ length: end }, (_, i) => counts[i]!);
}
