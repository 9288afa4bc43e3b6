import { errorCodes } from '../util/error-chain.js';

/**
 * Whether a Postgres failure at start is worth waiting out (the server is
 * away, starting or full) or a misconfiguration that must stop the node
 * (refused login, no such database, an untrusted certificate, a migration
 * that does not apply). Decided by codes: node:net's errno codes, postgres.js's
 * own connection codes, and SQLSTATE classes.
 */

/** The socket did not get through, or the connection went away: the server may come. */
const UNREACHABLE = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'EPIPE',
  // postgres.js
  'CONNECT_TIMEOUT', 'CONNECTION_CLOSED', 'CONNECTION_ENDED', 'CONNECTION_DESTROYED',
]);

export function isRetriablePostgresError(err: unknown): boolean {
  return errorCodes(err, 5).some((code) =>
    UNREACHABLE.has(code) ||
    // SQLSTATE 08 connection exception, 53 insufficient resources (too many
    // connections), 57P01-57P03 shutting down or not accepting connections yet.
    /^(08|53)[0-9A-Z]{3}$/.test(code) || /^57P0[123]$/.test(code),
  );
}
