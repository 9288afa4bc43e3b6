import { bodyBytes, type Bytes } from './encoding.js';

/**
 * What every verifier shares: headers in any form, the result shape, the
 * timestamp window and the Web Crypto calls.
 */

/**
 * Request headers as a receiver has them: a `Headers` instance (fetch, Deno,
 * Bun, edge runtimes), or a plain object with names in any case whose values
 * are strings or lists of strings (node:http `req.headers`, Express, Fastify).
 */
export type HeadersLike =
  | { get(name: string): string | null }
  | Readonly<Record<string, string | readonly string[] | undefined>>;

/** A request body exactly as received: the raw bytes, or the same bytes as text. */
export type Body = string | Uint8Array | ArrayBuffer;

/**
 * Why a request was refused. Every refusal is a `{ ok: false }` result, never
 * an exception (exceptions are kept for mistakes in the arguments: no secret,
 * a secret that is not base64).
 */
export type VerifyFailureReason =
  /** A header the scheme needs is absent (or empty). */
  | 'missing_header'
  /** A header is there but not in the scheme's format (a timestamp that is not digits, no signature entry). */
  | 'bad_format'
  /** The timestamp is older than `toleranceSeconds`. */
  | 'timestamp_too_old'
  /** The timestamp is further than `toleranceSeconds` ahead of the clock. */
  | 'timestamp_in_future'
  /** X-Service-Content-SHA256 is not the SHA-256 of the body received (the body was changed). */
  | 'body_hash_mismatch'
  /** No signature of the request verifies under any secret or public key given. */
  | 'no_matching_signature';

export interface VerifyFailure {
  ok: false;
  reason: VerifyFailureReason;
  /** A sentence for logs; not for the caller of your endpoint. */
  message: string;
}

export function fail(reason: VerifyFailureReason, message: string): VerifyFailure {
  return { ok: false, reason, message };
}

/** Every value of a header (a list for repeated headers), or [] when absent or empty. */
export function headerValues(headers: HeadersLike, name: string): string[] {
  const lower = name.toLowerCase();
  if (typeof (headers as { get?: unknown }).get === 'function') {
    const v = (headers as { get(name: string): string | null }).get(lower);
    return v === null || v === '' ? [] : [v];
  }
  const record = headers as Readonly<Record<string, string | readonly string[] | undefined>>;
  const out: string[] = [];
  for (const key of Object.keys(record)) {
    if (key.toLowerCase() !== lower) continue;
    const v = record[key];
    if (typeof v === 'string') out.push(v);
    else if (Array.isArray(v)) out.push(...(v as readonly string[]));
  }
  return out.filter((v) => v !== '');
}

/** One header that must appear once: its value, or a refusal. */
export function singleHeader(headers: HeadersLike, name: string, label = name): string | VerifyFailure {
  const values = headerValues(headers, name);
  if (values.length === 0) return fail('missing_header', `${label} is missing`);
  if (values.length > 1) return fail('bad_format', `${label} is given more than once`);
  return values[0]!;
}

/** Unix seconds, digits only. */
const SECONDS = /^\d{1,15}$/;

/**
 * The timestamp check, inclusive at the edges: `toleranceSeconds` (300 by
 * default) either way of `now` (epoch milliseconds, `Date.now()` by default).
 * Returns the timestamp, or a refusal.
 */
export function checkTimestamp(value: string, label: string, toleranceSeconds: number | undefined, now: number | undefined): number | VerifyFailure {
  const raw = value.trim();
  if (!SECONDS.test(raw)) return fail('bad_format', `${label} is not Unix seconds (digits only)`);
  const ts = Number(raw);
  const tolerance = toleranceSeconds ?? 300;
  if (!(tolerance >= 0)) throw new TypeError('toleranceSeconds must be a number >= 0');
  const nowSeconds = Math.floor((now ?? Date.now()) / 1000);
  if (ts < nowSeconds - tolerance) return fail('timestamp_too_old', `${label} is ${nowSeconds - ts} s old, over the ${tolerance} s tolerance`);
  if (ts > nowSeconds + tolerance) return fail('timestamp_in_future', `${label} is ${ts - nowSeconds} s ahead of the clock, over the ${tolerance} s tolerance`);
  return ts;
}

export function toList(value: string | readonly string[] | undefined): readonly string[] {
  if (value === undefined) return [];
  return typeof value === 'string' ? [value] : value;
}

export { bodyBytes };

// Web Crypto's types as the global object has them (no DOM lib, no node: import).
type Subtle = typeof globalThis.crypto.subtle;
export type Key = Awaited<ReturnType<Subtle['importKey']>>;

function subtle(): Subtle {
  const s = globalThis.crypto?.subtle;
  if (!s) throw new Error('Web Crypto (globalThis.crypto.subtle) is not available: a secure context or Node >= 20 is needed');
  return s;
}

/** An HMAC-SHA256 key for crypto.subtle.verify, which compares in constant time. */
export function hmacKey(secret: Bytes): Promise<Key> {
  return subtle().importKey('raw', secret, { name: 'HMAC', hash: 'SHA-256' }, false, ['verify']);
}

export function hmacVerify(key: Key, signature: Bytes, data: Bytes): Promise<boolean> {
  return subtle().verify('HMAC', key, signature, data);
}

export function ed25519Key(publicKey: Bytes): Promise<Key> {
  return subtle().importKey('raw', publicKey, { name: 'Ed25519' }, false, ['verify']);
}

export function ed25519Verify(key: Key, signature: Bytes, data: Bytes): Promise<boolean> {
  return subtle().verify({ name: 'Ed25519' }, key, signature, data);
}

export async function sha256(data: Bytes): Promise<Uint8Array> {
  return new Uint8Array(await subtle().digest('SHA-256', data));
}
