import { bodyBytes, checkTimestamp, fail, headerValues, hmacKey, hmacVerify, toList, type Body, type HeadersLike, type VerifyFailure } from './common.js';
import { concat, hexDecode, utf8, type Bytes } from './encoding.js';

/**
 * Payments-Signature (Stripe's scheme; streamgate re-signs with it when a
 * queue recalculates): `t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`,
 * possibly several `v1=` entries (any may match; the first 8 are tried);
 * entries of other schemes are ignored. The HMAC key is the secret string's
 * UTF-8 bytes, as given.
 */
export interface VerifyPaymentsInput {
  body: Body;
  /** The Payments-Signature header value; or give `headers` and it is read from there. */
  header?: string | null;
  headers?: HeadersLike;
  /** The secret, or several (rotation): any may match. */
  secret: string | readonly string[];
  /** How far `t` may be from now, either way, in seconds (default 300, inclusive). */
  toleranceSeconds?: number;
  /** Now, in epoch milliseconds (default Date.now()). */
  now?: number;
}

export interface VerifyPaymentsSuccess {
  ok: true;
  /** `t`, Unix seconds. */
  timestamp: number;
  /** Index of the secret that matched, in the order given. */
  secretIndex: number;
}

export type VerifyPaymentsResult = VerifyPaymentsSuccess | VerifyFailure;

const MAX_SIGNATURES = 8;

export async function verifyPaymentsSignature(input: VerifyPaymentsInput): Promise<VerifyPaymentsResult> {
  const secrets = toList(input.secret);
  if (secrets.length === 0 || secrets.some((s) => typeof s !== 'string' || s === '')) throw new TypeError('verifyPaymentsSignature needs a non-empty secret');

  const header = input.header ?? (input.headers ? headerValues(input.headers, 'payments-signature').join(',') : '');
  if (!header) return fail('missing_header', 'Payments-Signature is missing');

  let t: string | null = null;
  const signatures: Bytes[] = [];
  let v1Entries = 0;
  for (const part of header.split(',')) {
    const eq = part.indexOf('=');
    if (eq <= 0) continue;
    const name = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (name === 't') {
      if (t !== null) return fail('bad_format', 'Payments-Signature has more than one t=');
      t = value;
    } else if (name === 'v1') {
      v1Entries++;
      const bytes = hexDecode(value);
      if (bytes !== null && bytes.length > 0 && signatures.length < MAX_SIGNATURES) signatures.push(bytes);
    }
  }
  if (t === null) return fail('bad_format', 'Payments-Signature has no t=');
  if (v1Entries === 0) return fail('bad_format', 'Payments-Signature has no v1= entry');

  const timestamp = checkTimestamp(t, 'Payments-Signature t', input.toleranceSeconds, input.now);
  if (typeof timestamp !== 'number') return timestamp;

  const signed = concat(utf8(`${t}.`), bodyBytes(input.body));
  for (let i = 0; i < secrets.length; i++) {
    const key = await hmacKey(utf8(secrets[i]!));
    for (const sig of signatures) if (await hmacVerify(key, sig, signed)) return { ok: true, timestamp, secretIndex: i };
  }
  return fail('no_matching_signature', `no v1 entry verifies (${signatures.length} tried against ${secrets.length} secret(s))`);
}
