import { ServiceError } from '../errors.js';
import { CacheUnavailableError } from '../cache/cache-unavailable.js';

/**
 * postgres.js connection failures (its own codes and the socket's) and the
 * server's "cannot serve you now" SQLSTATEs: the database is away or
 * restarting, not wrong about the request.
 */
const DATABASE_DOWN_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'CONNECT_TIMEOUT',
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now (starting up, in recovery)
  '53300', // too_many_connections
]);

/** True when `err` says a dependency (Postgres, Redis) is away rather than that the request or our code is wrong. */
export function isDependencyFailure(err: unknown): boolean {
  if (err instanceof CacheUnavailableError) return true;
  if (typeof err !== 'object' || err === null) return false;
  const code = (err as { code?: unknown }).code;
  // SQLSTATE class 08: connection exception.
  return typeof code === 'string' && (DATABASE_DOWN_CODES.has(code) || /^08[0-9A-Z]{3}$/.test(code));
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
