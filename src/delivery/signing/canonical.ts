import { createHash, createHmac } from 'node:crypto';
import { canonicalQuery } from '../../auth/canonical-query.js';

// One QUERY canonicalisation for both directions: ingress verifies and
// delivery signs with the same function, so they can never disagree.
export { canonicalQuery };

/**
 * The canonical strings of docs/api.md#authentication (HMAC-SHA256, lowercase hex). Lines are
 * joined with "\n", no trailing newline:
 *
 *   v1:  METHOD  PATH  QUERY  X-Service-Timestamp  X-Service-Nonce  BODY_SHA256
 *   v2:  the v1 lines, then X-Service-Event-Id, then Idempotency-Key ("" when none)
 *
 * PATH is the path as sent on the wire (percent-encoded); QUERY is the
 * parameters re-encoded per RFC 3986 and sorted (see canonicalQuery).
 */
export interface V1Fields {
  method: string;
  path: string;
  /** Raw query string, without "?". */
  query: string;
  timestamp: string;
  nonce: string;
  bodySha256: string;
}

export function sha256Hex(body: Buffer | string): string {
  return createHash('sha256').update(body).digest('hex');
}

export function hmacHex(secret: string, text: string): string {
  return createHmac('sha256', secret).update(text).digest('hex');
}

export function v1Canonical(f: V1Fields): string {
  return [f.method.toUpperCase(), f.path, canonicalQuery(f.query), f.timestamp, f.nonce, f.bodySha256].join('\n');
}

export function v2Canonical(f: V1Fields, eventId: string, idempotencyKey: string | null): string {
  return `${v1Canonical(f)}\n${eventId}\n${idempotencyKey ?? ''}`;
}
