/**
 * A small in-process cache with per-entry expiry and a size cap. Loads are
 * coalesced: concurrent misses for one key share one loader call, so a burst of
 * requests for a cold key makes one database query, not hundreds.
 */
export class TtlCache<V> {
  private readonly entries = new Map<string, { value: V; expires: number }>();
  private readonly loading = new Map<string, Promise<V>>();
  private epoch = 0;

  private readonly ttlMs: number;
  private readonly maxEntries: number;
  constructor(
    ttlMs: number,
    maxEntries = 50_000,
  ) {
    this.ttlMs = ttlMs;
    this.maxEntries = maxEntries;
  }

  get(key: string): V | undefined {
    const hit = this.entries.get(key);
    if (!hit) return undefined;
    if (hit.expires < Date.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return hit.value;
  }

  set(key: string, value: V): void {
    if (!this.entries.has(key) && this.entries.size >= this.maxEntries) {
      // Maps iterate in insertion order: drop the oldest entry.
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    this.entries.set(key, { value, expires: Date.now() + this.ttlMs });
  }

  /** Returns the cached value or loads it once for all concurrent callers. */
  async getOrLoad(key: string, load: () => Promise<V>): Promise<V> {
    const hit = this.get(key);
    if (hit !== undefined) return hit;
    const pending = this.loading.get(key);
    if (pending) return pending;
    const startedAt = this.epoch;
    const promise = load().then(
      (value) => {
        if (this.loading.get(key) === promise) this.loading.delete(key);
        // A clear() while loading means the value may predate a write: don't keep it.
        if (startedAt === this.epoch) this.set(key, value);
        return value;
      },
      (err: unknown) => {
        if (this.loading.get(key) === promise) this.loading.delete(key);
        throw err;
      },
    );
    this.loading.set(key, promise);
    return promise;
  }

  delete(key: string): void {
    this.entries.delete(key);
  }

  clear(): void {
    this.epoch++;
    this.entries.clear();
    this.loading.clear();
  }
}
