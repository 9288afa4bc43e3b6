/**
 * The shared cache port: what the nodes of a cluster keep in common that is
 * not configuration (nonces, idempotency reservations, counters, cached views)
 * and how they tell each other about changes. Redis is the adapter for a
 * cluster; the in-process adapter serves a single node with no Redis.
 *
 * Keys are given without the deployment's prefix; adapters add it.
 */
export interface CacheStore {
  get(key: string): Promise<string | null>;
  /** Sets a value, optionally expiring after `ttlMs`. */
  set(key: string, value: string, ttlMs?: number): Promise<void>;
  /** Sets the value only when the key is absent; true when this call set it. */
  setIfAbsent(key: string, value: string, ttlMs: number): Promise<boolean>;
  /**
   * Sets the value when the key holds `expected` or nothing at all (completing
   * a reservation that may have expired meanwhile); true when it was set.
   */
  setIfEqualsOrAbsent(key: string, expected: string, value: string, ttlMs: number): Promise<boolean>;
  /** Deletes the key only while it still holds `expected` (releasing a reservation). */
  deleteIfEquals(key: string, expected: string): Promise<boolean>;
  delete(key: string): Promise<void>;
  /** Adds to an integer counter (created at 0), refreshing its expiry when `ttlMs` is given. */
  incr(key: string, by?: number, ttlMs?: number): Promise<number>;
  /** Several counters at once (missing ones as 0): one round trip for a series. */
  getCounters(keys: string[]): Promise<number[]>;
  publish(channel: string, message: string): Promise<void>;
  subscribe(channel: string, listener: (message: string) => void): Promise<void>;
  close(): Promise<void>;
}
