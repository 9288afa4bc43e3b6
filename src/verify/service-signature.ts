import { canonicalQuery } from './canonical-query.js';
import {
  bodyBytes,
  checkTimestamp,
  fail,
  headerValues,
  hmacKey,
  hmacVerify,
  sha256,
  singleHeader,
  toList,
  type Body,
  type HeadersLike,
  type VerifyFailure,
} from './common.js';
import { hexDecode, hexEncode, utf8, type Bytes } from './encoding.js';

/**
 * The X-Service signatures streamgate puts on deliveries of `outboundSigning:
 * hmac` queues (docs/api.md#canonical-strings): HMAC-SHA256, lowercase hex,
 * keyed with the signing key's secret string as UTF-8 bytes (`whsec_`
 * prefix included), over lines joined with "\n":
 *
 *   v1 (X-Service-Signature):        POST, PATH, QUERY, X-Service-Timestamp, X-Service-Nonce, BODY_SHA256
 *   v2 (X-Service-Signatures: v2=…): the v1 lines, X-Service-Event-Id, Idempotency-Key ("" when none)
 *
 * PATH is the path as sent (still percent-encoded), QUERY the canonical query,
 * BODY_SHA256 the lowercase hex SHA-256 of the raw body.
 */
export interface VerifyServiceInput {
  /** The raw body as received (bytes, or the same bytes as text): never re-serialised JSON. */
  body: Body;
  headers: HeadersLike;
  /**
   * The request target as received: path plus `?query`, still percent-encoded
   * (node:http and Express `req.originalUrl`, Fastify `request.url`), or a
   * full URL (`request.url` of a fetch-style handler).
   */
  url: string;
  /** The signing key's secret, or several during a rotation: any may match. */
  secret: string | readonly string[];
  /**
   * Which signature to check: `v2` (default; it also binds the event id and
   * Idempotency-Key), `v1`, or `either` (v2 when the request carries one,
   * else v1).
   */
  version?: 'v2' | 'v1' | 'either';
  /** The request method (default POST, the only one deliveries use). */
  method?: string;
  /** How far X-Service-Timestamp may be from now, either way, in seconds (default 300, inclusive). */
  toleranceSeconds?: number;
  /** Now, in epoch milliseconds (default Date.now()). */
  now?: number;
}

export interface VerifyServiceSuccess {
  ok: true;
  version: 'v1' | 'v2';
  /** X-Service-Key-Id (informational: which key signed), or null. */
  keyId: string | null;
  /** X-Service-Event-Id: deduplicate on it (deliveries are at least once). Covered by v2 only. */
  eventId: string | null;
  /** Idempotency-Key, or null. Covered by v2 only. */
  idempotencyKey: string | null;
  /** X-Service-Nonce, new on every attempt: remember it for the tolerance window to refuse replays. */
  nonce: string;
  /** X-Service-Timestamp, Unix seconds. */
  timestamp: number;
  /** Index of the secret that matched, in the order given. */
  secretIndex: number;
}

export type VerifyServiceResult = VerifyServiceSuccess | VerifyFailure;

export async function verifyServiceSignature(input: VerifyServiceInput): Promise<VerifyServiceResult> {
  const secrets = toList(input.secret);
  if (secrets.length === 0 || secrets.some((s) => typeof s !== 'string' || s === '')) throw new TypeError('verifyServiceSignature needs a non-empty secret');
  const wanted = input.version ?? 'v2';

  const timestampHeader = singleHeader(input.headers, 'x-service-timestamp', 'X-Service-Timestamp');
  if (typeof timestampHeader !== 'string') return timestampHeader;
  const nonce = singleHeader(input.headers, 'x-service-nonce', 'X-Service-Nonce');
  if (typeof nonce !== 'string') return nonce;

  const v2Values = parseVersioned(headerValues(input.headers, 'x-service-signatures').join(','), 'v2');
  const useV2 = wanted === 'v2' || (wanted === 'either' && v2Values.length > 0);
  const eventId: string | null = optionalHeader(input.headers, 'x-service-event-id');
  const idempotencyKey = optionalHeader(input.headers, 'idempotency-key');
  let signatures: Bytes[];
  if (useV2) {
    if (headerValues(input.headers, 'x-service-signatures').length === 0) return fail('missing_header', 'X-Service-Signatures is missing');
    if (v2Values.length === 0) return fail('bad_format', 'X-Service-Signatures holds no "v2=<hex>" entry');
    if (eventId === null) return fail('missing_header', 'X-Service-Event-Id is missing (v2 covers it)');
    signatures = v2Values;
  } else {
    const v1 = singleHeader(input.headers, 'x-service-signature', 'X-Service-Signature');
    if (typeof v1 !== 'string') return v1;
    const bytes = hexDecode(v1.trim());
    if (bytes === null || bytes.length === 0) return fail('bad_format', 'X-Service-Signature is not hex');
    signatures = [bytes];
  }

  const timestamp = checkTimestamp(timestampHeader, 'X-Service-Timestamp', input.toleranceSeconds, input.now);
  if (typeof timestamp !== 'number') return timestamp;

  const body = bodyBytes(input.body);
  const bodySha256 = hexEncode(await sha256(body));
  const claimed = optionalHeader(input.headers, 'x-service-content-sha256');
  if (claimed !== null && claimed.trim().toLowerCase() !== bodySha256) return fail('body_hash_mismatch', 'X-Service-Content-SHA256 is not the SHA-256 of the body received');

  const target = splitTarget(input.url);
  const lines = [(input.method ?? 'POST').toUpperCase(), target.path, canonicalQuery(target.query), timestampHeader, nonce, bodySha256];
  if (useV2) lines.push(eventId!, idempotencyKey ?? '');
  const text = utf8(lines.join('\n'));
  for (let i = 0; i < secrets.length; i++) {
    const key = await hmacKey(utf8(secrets[i]!));
    for (const sig of signatures) {
      if (await hmacVerify(key, sig, text)) {
        return { ok: true, version: useV2 ? 'v2' : 'v1', keyId: optionalHeader(input.headers, 'x-service-key-id'), eventId, idempotencyKey, nonce, timestamp, secretIndex: i };
      }
    }
  }
  return fail('no_matching_signature', `the ${useV2 ? 'v2' : 'v1'} signature does not verify under any of ${secrets.length} secret(s)`);
}

function optionalHeader(headers: HeadersLike, name: string): string | null {
  const values = headerValues(headers, name);
  return values.length === 1 ? values[0]! : null;
}

/** `v1=ab…,v2=cd…` → the decoded signatures of one version (at most 8). */
function parseVersioned(value: string, version: string): Bytes[] {
  const out: Bytes[] = [];
  for (const part of value.split(',')) {
    const eq = part.indexOf('=');
    if (eq <= 0 || part.slice(0, eq).trim() !== version) continue;
    const bytes = hexDecode(part.slice(eq + 1).trim());
    if (bytes !== null && bytes.length > 0 && out.length < 8) out.push(bytes);
  }
  return out;
}

/** Path and raw query of a request target or a full URL. */
function splitTarget(url: string): { path: string; query: string } {
  let rest = url;
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(url)) {
    const u = new URL(url);
    rest = u.pathname + u.search;
  }
  const q = rest.indexOf('?');
  return q === -1 ? { path: rest, query: '' } : { path: rest.slice(0, q), query: rest.slice(q + 1) };
}
