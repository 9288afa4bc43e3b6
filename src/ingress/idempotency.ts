import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import { ServiceError } from '../errors.js';

/**
 * Idempotency-Key deduplication across every ingress node (reference §6, §8).
 * One Redis key per (queue, Idempotency-Key) moves through two states:
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

// KEYS[1] the idempotency key; ARGV[1] our pending value, ARGV[2] the done value, ARGV[3] window ms.
// Done only if the reservation is still ours, or gone (expired: our event is in
// the log all the same, so later duplicates should find it).
const COMMIT = `
local v = redis.call('GET', KEYS[1])
if v == ARGV[1] or v == false then
  redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
  return 1
end
return 0`;

// KEYS[1] the idempotency key; ARGV[1] our pending value. Never deletes someone else's reservation.
const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0`;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export class IdempotencyGate {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly options: IdempotencyOptions,
  ) {}

  /**
   * Reserves (scope, key) for `eventId`, or finds the event that holds it.
   * `scope` separates queues (and sandbox from production); the key is hashed
   * so any length or character set makes a bounded Redis key.
   */
  async claim(scope: string, key: string, eventId: string, windowSeconds: number): Promise<Claim> {
    const redisKey = `${this.prefix}idem:${scope}:${createHash('sha256').update(key).digest('base64url')}`;
    const pending = `p:${eventId}`;
    const deadline = Date.now() + this.options.waitMs;
    let pause = 5;
    for (;;) {
      const taken = await this.call(() => this.redis.set(redisKey, pending, 'PX', this.options.pendingTtlMs, 'NX'));
      if (taken === 'OK') {
        return {
          kind: 'won',
          commit: async () => {
            await this.redis.eval(COMMIT, 1, redisKey, pending, `d:${eventId}`, String(windowSeconds * 1000));
          },
          release: async () => {
            await this.redis.eval(RELEASE, 1, redisKey, pending);
          },
        };
      }
      const current = await this.call(() => this.redis.get(redisKey));
      if (current !== null && current.startsWith('d:')) return { kind: 'replay', eventId: current.slice(2) };
      // null: released or expired between our SET and GET: try to take it again at once.
      if (current === null) continue;
      if (Date.now() >= deadline) {
        throw new ServiceError('conflict', 'A request with this Idempotency-Key is still being processed; retry later.');
      }
      await sleep(pause);
      pause = Math.min(pause * 2, 100);
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
