import { ServiceError } from '../errors.js';
import { canonicalQuery } from './canonical-query.js';

/**
 * Signed-request ingress (docs/api.md#authentication). The sender signs
 *
 *   METHOD \n PATH \n QUERY \n X-Service-Key-Id \n X-Service-Timestamp \n X-Service-Nonce \n BODY_SHA256
 *
 * with HMAC-SHA256 under one of the workspace's active signing keys and sends
 * the lowercase hex in X-Service-Signature, the body's SHA-256 in
 * X-Service-Content-SHA256. This module parses and shapes; the hashing itself
 * runs as a CheckJob (inline or in the validation pool).
 */
export interface SignedHeaders {
  keyId: string;
  timestamp: string;
  nonce: string;
  contentSha: string;
  signature: string;
}

// Printable ASCII without spaces: what an id or nonce can be on both sides
// without any question of encoding. 128 characters is plenty for a UUID or more.
const TOKEN = /^[\x21-\x7e]{1,128}$/;
const HEX64 = /^[0-9a-f]{64}$/;
const DIGITS = /^[0-9]{1,12}$/;

const HEADERS: ReadonlyArray<[keyof SignedHeaders, string]> = [
  ['keyId', 'x-service-key-id'],
  ['timestamp', 'x-service-timestamp'],
  ['nonce', 'x-service-nonce'],
  ['contentSha', 'x-service-content-sha256'],
  ['signature', 'x-service-signature'],
];

/** Reads the five signature headers; any missing or malformed one is invalid_signature. */
export function readSignedHeaders(headers: Readonly<Record<string, string>>): SignedHeaders {
  const out = {} as SignedHeaders;
  const missing: string[] = [];
  for (const [field, name] of HEADERS) {
    const value = headers[name];
    if (value === undefined || value === '') missing.push(name);
    else out[field] = value;
  }
  if (missing.length > 0) {
    throw new ServiceError('invalid_signature', `A signed request needs the headers ${missing.map(headerCase).join(', ')}.`);
  }
  if (!TOKEN.test(out.keyId)) throw new ServiceError('invalid_signature', 'X-Service-Key-Id is not a valid key id.');
  if (!TOKEN.test(out.nonce)) throw new ServiceError('invalid_signature', 'X-Service-Nonce must be 1-128 printable ASCII characters.');
  if (!HEX64.test(out.contentSha)) throw new ServiceError('invalid_signature', 'X-Service-Content-SHA256 must be 64 lowercase hex digits.');
  if (!HEX64.test(out.signature)) throw new ServiceError('invalid_signature', 'X-Service-Signature must be 64 lowercase hex digits.');
  return out;
}

/**
 * Unix seconds, strictly: digits only, no sign, fraction, exponent, spaces or
 * trailing characters (so "1700000000abc" and milliseconds-as-seconds typos are
 * refused, not half-parsed). Then the skew check, inclusive at the tolerance.
 */
export function checkTimestamp(raw: string, nowSeconds: number, toleranceSeconds: number, header: string): number {
  if (!DIGITS.test(raw)) {
    throw new ServiceError('timestamp_out_of_range', `${header} must be Unix seconds written as digits only.`);
  }
  const ts = Number(raw);
  if (Math.abs(nowSeconds - ts) > toleranceSeconds) {
    throw new ServiceError('timestamp_out_of_range', `${header} is more than ${toleranceSeconds} s away from the server's clock.`);
  }
  return ts;
}

/** The canonical string without its last line (BODY_SHA256, computed where the body is hashed). */
export function canonicalHead(method: string, path: string, rawQuery: string, h: SignedHeaders): string {
  return `${method}\n${path}\n${canonicalQuery(rawQuery)}\n${h.keyId}\n${h.timestamp}\n${h.nonce}\n`;
}

function headerCase(name: string): string {
  return name.replace(/(^|-)([a-z])/g, (_m, dash: string, c: string) => dash + c.toUpperCase()).replace('Sha256', 'SHA256');
}
