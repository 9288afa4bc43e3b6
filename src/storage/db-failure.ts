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
  return codes(err).some((code) =>
    UNREACHABLE.has(code) ||
    // SQLSTATE 08 connection exception, 53 insufficient resources (too many
    // connections), 57P01-57P03 shutting down or not accepting connections yet.
    /^(08|53)[0-9A-Z]{3}$/.test(code) || /^57P0[123]$/.test(code),
  );
}

/** The codes on the error, its `errors` (a multi-address connect) and its causes. */
function codes(err: unknown, depth = 0): string[] {
  if (!err || typeof err !== 'object' || depth > 5) return [];
  const e = err as { code?: unknown; errors?: unknown; cause?: unknown };
  const out = typeof e.code === 'string' ? [e.code] : [];
  if (Array.isArray(e.errors)) for (const inner of e.errors) out.push(...codes(inner, depth + 1));
  if (e.cause) out.push(...codes(e.cause, depth + 1));
  return out;
}
