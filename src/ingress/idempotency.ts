import { createHash } from 'node:crypto';
import type { CacheStore } from '../cache/cache-store.js';
import { ServiceError } from '../errors.js';
import { backoffDelay } from '../util/backoff.js';

/**
 * Idempotency-Key deduplication across every ingress node (docs/api.md#ingress).
 * One shared cache key (Redis in a cluster) per (queue, Idempotency-Key) moves through two states:
 *
 *   (none) ──SET NX "p:<eventId>" PX pendingTtl──► pending ──Kafka ack──► "d:<eventId>" PX window
 *                                                     │
 *                                                     └─ append failed: DEL (only if still ours)
 *
 * The request that wins the SET NX appends its event; every concurrent
 * duplicate (on any node) waits while the key is pending. It answers with the
 * first event's id only once the key says done, i.e. after Kafka acknowledged
 * that event: a duplicate never answers with an id that was not durably
 * accepted. If the winner fails it releases the key and a waiting duplicate
 * takes over as the new winner. A winner that dies without releasing leaves a
 * pending key that expires after pendingTtl; waiting duplicates give up
 * earlier with 409 conflict, which is safe to retry.
 */
export type Claim =
  | { kind: 'won'; commit(): Promise<void>; release(): Promise<void> }
  | { kind: 'replay'; eventId: string };

export interface IdempotencyOptions {
  /** How long a reservation holds without a commit (must exceed the longest append). */
  pendingTtlMs: number;
  /** How long a duplicate waits for the first request to finish before 409. */
  waitMs: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** A duplicate polls for the first request's outcome: soon at first, then every 100 ms. */
const WAIT_BACKOFF = { baseMs: 5, maxMs: 100 };

export class IdempotencyGate {
  private readonly cache: CacheStore;
  private readonly options: IdempotencyOptions;
  constructor(
    cache: CacheStore,
    options: IdempotencyOptions,
  ) {
    this.cache = cache;
    this.options = options;
  }

  /**
   * Reserves (scope, key) for `eventId`, or finds the event that holds it.
   * `scope` separates queues (and sandbox from production); the key is hashed
   * so any length or character set makes a bounded cache key.
   */
  async claim(scope: string, key: string, eventId: string, windowSeconds: number): Promise<Claim> {
    const cacheKey = `idem:${scope}:${createHash('sha256').update(key).digest('base64url')}`;
    const pending = `p:${eventId}`;
    const deadline = Date.now() + this.options.waitMs;
    let waits = 0;
    for (;;) {
      const taken = await this.call(() => this.cache.setIfAbsent(cacheKey, pending, this.options.pendingTtlMs));
      if (taken) {
        return {
          kind: 'won',
          // Done only if the reservation is still ours, or gone (expired: our
          // event is in the log all the same, so later duplicates should find it).
          commit: async () => {
            await this.cache.setIfEqualsOrAbsent(cacheKey, pending, `d:${eventId}`, windowSeconds * 1000);
          },
          // Never deletes someone else's reservation.
          release: async () => {
            await this.cache.deleteIfEquals(cacheKey, pending);
          },
        };
      }
      const current = await this.call(() => this.cache.get(cacheKey));
      if (current !== null && current.startsWith('d:')) return { kind: 'replay', eventId: current.slice(2) };
      // null: released or expired between our SET and GET: try to take it again at once.
      if (current === null) continue;
      if (Date.now() >= deadline) {
        throw new ServiceError('conflict', 'A request with this Idempotency-Key is still being processed; retry later.');
      }
      await sleep(backoffDelay(waits++, WAIT_BACKOFF));
    }
  }

  private async call<T>(op: () => Promise<T>): Promise<T> {
    try {
      return await op();
    } catch {
      throw new ServiceError('unavailable', 'The idempotency store is unavailable; retry later.');
    }
  }
}
