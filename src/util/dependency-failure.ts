import { ServiceError } from '../errors.js';
import { CacheUnavailableError } from '../cache/cache-unavailable.js';
import { isRetriablePostgresError } from '../storage/db-failure.js';

/** True when `err` says a dependency (Postgres, Redis) is away rather than that the request or our code is wrong. */
export function isDependencyFailure(err: unknown): boolean {
  // The same codes a start waits out (src/storage/db-failure.ts): the server is away, starting or full.
  return err instanceof CacheUnavailableError || isRetriablePostgresError(err);
}

/**
 * The answer to a request that failed because a dependency is away: 503
 * `unavailable` (retryable), never 500. Null for any other error.
 */
export function dependencyFailure(err: unknown): ServiceError | null {
  if (!isDependencyFailure(err)) return null;
  const what = err instanceof CacheUnavailableError ? 'The shared cache' : 'The database';
  return new ServiceError('unavailable', `${what} is unavailable; retry later.`);
}
