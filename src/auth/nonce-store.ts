import type { Redis } from 'ioredis';
import { ServiceError } from '../errors.js';

/**
 * Single-use nonces of signed requests, shared by every ingress node through
 * Redis: `SET key 1 NX EX ttl` succeeds only for the first request that
 * presents the nonce. The TTL is at least twice the skew window (contract §3):
 * a request whose timestamp is still inside the window always finds its
 * nonce's earlier use, and Redis forgets nonces no timestamp can reach anymore.
 */
export class NonceStore {
  private readonly ttlSeconds: number;

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    skewSeconds: number,
  ) {
    this.ttlSeconds = 2 * skewSeconds + 60;
  }

  /** True the first time (keyId, nonce) is seen; false on reuse. */
  async consume(keyId: string, nonce: string): Promise<boolean> {
    let result: string | null;
    try {
      result = await this.redis.set(`${this.prefix}nonce:${keyId}:${nonce}`, '1', 'EX', this.ttlSeconds, 'NX');
    } catch {
      // Without the shared store a replay cannot be ruled out: refuse, retryably.
      throw new ServiceError('unavailable', 'The nonce store is unavailable; retry with a new nonce.');
    }
    return result === 'OK';
  }
}
