/**
 * The shared cache (Redis) did not answer: refused, reset, silent past the
 * command timeout, or reconnecting. Callers that can do without the cache
 * (route versions, the gate's shared view) fall back to Postgres; requests
 * that cannot (idempotency keys, nonces, distributed-traffic counters) answer
 * 503 `unavailable` (src/util/dependency-failure.ts).
 */
export class CacheUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'CacheUnavailableError';
  }
}
