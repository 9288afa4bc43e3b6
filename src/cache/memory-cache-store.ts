import type { CacheStore } from './cache-store.js';

/**
 * The cache port in process memory, for a single node without Redis. Same
 * semantics as the Redis adapter (expiry, set-if-absent, counters, pub/sub);
 * nothing is shared with other processes, which is why it is single-node only.
 * Within one process, `shared(prefix)` hands every caller of one prefix the
 * same store, as Redis would (the node and tools running beside it agree).
 */
export class MemoryCacheStore implements CacheStore {
  private static readonly registry = new Map<string, { store: MemoryCacheStore; users: number }>();

  /** The process-wide store of `prefix`; close() releases this handle. */
  static shared(prefix: string): CacheStore {
    let entry = MemoryCacheStore.registry.get(prefix);
    if (!entry) {
      entry = { store: new MemoryCacheStore(), users: 0 };
      MemoryCacheStore.registry.set(prefix, entry);
    }
    entry.users++;
    const { store } = entry;
    let closed = false;
    return Object.assign(Object.create(store) as MemoryCacheStore, {
      close: async () => {
        if (closed) return;
        closed = true;
        const current = MemoryCacheStore.registry.get(prefix);
        if (current && --current.users === 0) {
          MemoryCacheStore.registry.delete(prefix);
          await store.close();
        }
      },
    });
  }

  private readonly values = new Map<string, { value: string; expires: number }>();
  private readonly listeners = new Map<string, Array<(message: string) => void>>();
  private readonly sweeper: NodeJS.Timeout;

  constructor() {
    // Expired entries are dropped lazily on read; the sweep bounds memory for
    // keys never read again (nonces, idempotency keys).
    this.sweeper = setInterval(() => this.sweep(), 30_000);
    this.sweeper.unref();
  }

  private live(key: string): { value: string; expires: number } | undefined {
    const entry = this.values.get(key);
    if (entry && entry.expires <= Date.now()) {
      this.values.delete(key);
      return undefined;
    }
    return entry;
  }

  async get(key: string): Promise<string | null> {
    return this.live(key)?.value ?? null;
  }

  async set(key: string, value: string, ttlMs?: number): Promise<void> {
    this.values.set(key, { value, expires: ttlMs === undefined ? Infinity : Date.now() + ttlMs });
  }

  async setIfAbsent(key: string, value: string, ttlMs: number): Promise<boolean> {
    if (this.live(key)) return false;
    this.values.set(key, { value, expires: Date.now() + ttlMs });
    return true;
  }

  async setIfEqualsOrAbsent(key: string, expected: string, value: string, ttlMs: number): Promise<boolean> {
    const current = this.live(key);
    if (current && current.value !== expected) return false;
    this.values.set(key, { value, expires: Date.now() + ttlMs });
    return true;
  }

  async deleteIfEquals(key: string, expected: string): Promise<boolean> {
    if (this.live(key)?.value !== expected) return false;
    this.values.delete(key);
    return true;
  }

  async delete(key: string): Promise<void> {
    this.values.delete(key);
  }

  async incr(key: string, by = 1, ttlMs?: number): Promise<number> {
    const entry = this.live(key);
    const next = (entry ? Number(entry.value) : 0) + by;
    const expires = ttlMs !== undefined ? Date.now() + ttlMs : (entry?.expires ?? Infinity);
    this.values.set(key, { value: String(next), expires });
    return next;
  }

  async getCounters(keys: string[]): Promise<number[]> {
    return keys.map((key) => Number(this.live(key)?.value ?? 0));
  }

  async publish(channel: string, message: string): Promise<void> {
    for (const fn of this.listeners.get(channel) ?? []) queueMicrotask(() => fn(message));
  }

  async subscribe(channel: string, listener: (message: string) => void): Promise<void> {
    const list = this.listeners.get(channel) ?? [];
    list.push(listener);
    this.listeners.set(channel, list);
  }

  private sweep(): void {
    const now = Date.now();
    for (const [key, entry] of this.values) if (entry.expires <= now) this.values.delete(key);
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    this.listeners.clear();
  }
}
