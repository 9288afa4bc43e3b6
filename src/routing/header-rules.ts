/**
 * The header rules of docs/api.md#ingress, in one place for both sides that save
 * header configuration: targets (static headers, group key header; see
 * src/api/v1/target-input.ts) and queues (mapped headers; see
 * src/api/v1/queue-input.ts). Delivery applies the same precedence when it
 * builds a request (src/delivery/http/outbound-headers.ts).
 *
 * Precedence on a collision, lowest first (rule 1):
 *   mapped headers / group key header  <  the service's own  <  static / auth / signing
 * The configuration API refuses collisions at save, so the precedence only
 * matters for configuration saved before a rule existed.
 *
 * All functions take and compare lower-case names.
 */

export const PAYMENTS_SIGNATURE = 'payments-signature';

/** Names that can never be forwarded as mapped or group-key headers (docs/api.md#ingress). */
const NEVER_FORWARDED = new Set([
  // dedup identity
  'idempotency-key', 'x-idempotency-key', 'x-delivery-key',
  // credentials
  'authorization', 'proxy-authorization', 'cookie', 'set-cookie', 'x-api-key',
  // transport
  'host', 'content-type', 'content-length', 'connection', 'transfer-encoding', 'expect', 'upgrade', 'te',
]);

/** The service's own vocabulary: every X-Service-* header, including the HMAC ones. */
export function isServiceHeader(name: string): boolean {
  return name.startsWith('x-service-');
}

/** Headers the service itself sets on every delivery (rule 1's middle layer). */
const SERVICE_OWN = new Set(['content-type', 'idempotency-key']);

/** Transport headers the HTTP clients (Http1Pool, undici) manage; a configured value would corrupt the request. */
const TRANSPORT = new Set(['host', 'content-length', 'connection', 'transfer-encoding', 'expect', 'upgrade', 'te', 'keep-alive']);

/** What the HTTP clients send as a header value (as node:http): tab, visible ASCII, space and Latin-1 (no CR, LF, NUL). */
export const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

export function isHeaderValue(value: string): boolean {
  return HEADER_VALUE.test(value);
}

/** RFC 9110 token: what a header name may consist of. */
export const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/;

/**
 * Why a mapped or group-key header may not be sent under `name`, or null when
 * it may. `paymentsRecalculation` is the queue's setting (rule 3); a target,
 * which any queue may route to, passes true to stay safe for all of them.
 */
export function forwardedHeaderProblem(name: string, paymentsRecalculation: boolean): string | null {
  const lower = name.toLowerCase();
  if (!HEADER_NAME.test(name)) return 'is not a valid header name';
  if (isServiceHeader(lower)) return 'cannot be forwarded: X-Service-* is the service\'s own vocabulary';
  if (NEVER_FORWARDED.has(lower)) return `cannot be forwarded: ${name} is never forwardable`;
  if (paymentsRecalculation && lower === PAYMENTS_SIGNATURE) {
    return 'cannot be Payments-Signature: with recalculation on only the signing step writes it';
  }
  return null;
}

/**
 * Why a target may not carry a static header `name`, or null when it may.
 * `authSetsAuthorization` is true when the target's auth mode writes Authorization.
 */
export function staticHeaderProblem(name: string, authSetsAuthorization: boolean): string | null {
  const lower = name.toLowerCase();
  if (!HEADER_NAME.test(name)) return 'is not a valid header name';
  if (lower === 'x-service-event-id' || lower === 'idempotency-key') return 'cannot be a static header';
  if (isServiceHeader(lower)) return 'collides with the service\'s own X-Service-* headers';
  if (SERVICE_OWN.has(lower)) return 'collides with a header the service sets itself';
  if (TRANSPORT.has(lower)) return 'is a transport header the service manages';
  if (lower === PAYMENTS_SIGNATURE) return 'cannot be Payments-Signature: only the signing step writes it';
  if (lower === 'authorization' && authSetsAuthorization) return 'collides with the Authorization header of the target\'s auth mode';
  return null;
}

/**
 * Collisions between the headers a queue forwards (mapped header names) and
 * the headers a target sets (static names, its group key header), which only
 * show once the two are routed together. Returns one problem per colliding name.
 */
export function routeCollisions(
  mappedNames: readonly string[],
  target: { staticHeaders: Readonly<Record<string, string>>; groupKeyHeader?: string | undefined },
): string[] {
  const forwarded = new Set(mappedNames.map((n) => n.toLowerCase()));
  const problems: string[] = [];
  for (const name of Object.keys(target.staticHeaders)) {
    if (forwarded.has(name.toLowerCase())) problems.push(`static header ${name} collides with a mapped header of the queue`);
  }
  const gk = target.groupKeyHeader?.toLowerCase();
  if (gk && forwarded.has(gk)) problems.push(`groupKeyHeader ${target.groupKeyHeader} collides with a mapped header of the queue`);
  return problems;
}
