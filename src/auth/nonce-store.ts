import type { CacheStore } from '../cache/cache-store.js';
import { ServiceError } from '../errors.js';

/**
 * Single-use nonces of signed requests, shared by every ingress node through
 * the cache (Redis in a cluster): set-if-absent succeeds only for the first
 * request that presents the nonce. The TTL is at least twice the skew window (docs/api.md#authentication):
 * a request whose timestamp is still inside the window always finds its
 * nonce's earlier use, and Redis forgets nonces no timestamp can reach anymore.
 */
export class NonceStore {
  private readonly ttlMs: number;

  private readonly cache: CacheStore;
  constructor(
    cache: CacheStore,
    skewSeconds: number,
  ) {
    this.cache = cache;
    this.ttlMs = (2 * skewSeconds + 60) * 1000;
  }

  /** True the first time (keyId, nonce) is seen; false on reuse. */
  async consume(keyId: string, nonce: string): Promise<boolean> {
    try {
      return await this.cache.setIfAbsent(`nonce:${keyId}:${nonce}`, '1', this.ttlMs);
    } catch {
      // Without the shared store a replay cannot be ruled out: refuse, retryably.
      throw new ServiceError('unavailable', 'The nonce store is unavailable; retry with a new nonce.');
    }
  }
}
