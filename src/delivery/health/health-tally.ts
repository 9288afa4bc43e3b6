/** Width of a counter bucket: the success rate and latency of a window add up its buckets (migration 110). */
export const BUCKET_MS = 5 * 60_000;

/** What one delivery node saw of one target in one bucket since its last flush. */
export interface BucketTally {
  targetId: string;
  bucketAt: number;
  attempts: number;
  succeeded: number;
  latencyMsSum: number;
  latencyMsMax: number;
}

/** What one node saw of one target since its last flush, beyond the counts. */
export interface TargetTally {
  targetId: string;
  /** Failures after the last success seen (all of them when none was seen). */
  tailFailures: number;
  /** Time of the last success seen, null when none: then tailFailures add to the stored count. */
  lastSuccessAt: number | null;
  lastError: string | null;
  lastErrorAt: number | null;
}

/**
 * Per-target attempt counters of one delivery node, in memory: a map lookup
 * and a few additions per attempt; `take()` hands over what accumulated for
 * one batched write and starts afresh.
 */
export class HealthTally {
  /** Per target: its tally, the bucket attempts go to now, and buckets it left since the last take. */
  private targets = new Map<string, { tally: TargetTally; bucket: BucketTally; older: BucketTally[] }>();

  /** One attempt's result (`ok`: the receiver answered 2xx). */
  add(targetId: string, ok: boolean, durationMs: number, error: string | null, atMs: number): void {
    const bucketAt = atMs - (atMs % BUCKET_MS);
    let entry = this.targets.get(targetId);
    if (!entry) {
      entry = { tally: { targetId, tailFailures: 0, lastSuccessAt: null, lastError: null, lastErrorAt: null }, bucket: emptyBucket(targetId, bucketAt), older: [] };
      this.targets.set(targetId, entry);
    } else if (entry.bucket.bucketAt !== bucketAt) {
      entry.older.push(entry.bucket);
      entry.bucket = emptyBucket(targetId, bucketAt);
    }
    const b = entry.bucket;
    const latency = Math.max(0, Math.round(durationMs));
    b.attempts++;
    b.latencyMsSum += latency;
    if (latency > b.latencyMsMax) b.latencyMsMax = latency;
    const t = entry.tally;
    if (ok) {
      b.succeeded++;
      t.tailFailures = 0;
      t.lastSuccessAt = atMs;
    } else {
      t.tailFailures++;
      t.lastError = error;
      t.lastErrorAt = atMs;
    }
  }

  get size(): number {
    return this.targets.size;
  }

  /** Everything counted since the last take. */
  take(): { buckets: BucketTally[]; targets: TargetTally[] } {
    const out: { buckets: BucketTally[]; targets: TargetTally[] } = { buckets: [], targets: [] };
    for (const entry of this.targets.values()) {
      out.buckets.push(...entry.older, entry.bucket);
      out.targets.push(entry.tally);
    }
    this.targets = new Map();
    return out;
  }
}

function emptyBucket(targetId: string, bucketAt: number): BucketTally {
  return { targetId, bucketAt, attempts: 0, succeeded: 0, latencyMsSum: 0, latencyMsMax: 0 };
}
