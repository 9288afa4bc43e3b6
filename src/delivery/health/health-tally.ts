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
  private buckets = new Map<string, BucketTally>();
  private targets = new Map<string, TargetTally>();

  /** One attempt's result (`ok`: the receiver answered 2xx). */
  add(targetId: string, ok: boolean, durationMs: number, error: string | null, atMs: number): void {
    const bucketAt = atMs - (atMs % BUCKET_MS);
    const key = `${targetId}|${bucketAt}`;
    let b = this.buckets.get(key);
    if (!b) this.buckets.set(key, (b = { targetId, bucketAt, attempts: 0, succeeded: 0, latencyMsSum: 0, latencyMsMax: 0 }));
    const latency = Math.max(0, Math.round(durationMs));
    b.attempts++;
    b.latencyMsSum += latency;
    if (latency > b.latencyMsMax) b.latencyMsMax = latency;
    let t = this.targets.get(targetId);
    if (!t) this.targets.set(targetId, (t = { targetId, tailFailures: 0, lastSuccessAt: null, lastError: null, lastErrorAt: null }));
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
    const out = { buckets: [...this.buckets.values()], targets: [...this.targets.values()] };
    this.buckets = new Map();
    this.targets = new Map();
    return out;
  }
}
