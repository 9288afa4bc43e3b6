import {
  bodyBytes,
  checkTimestamp,
  ed25519Key,
  ed25519Verify,
  fail,
  hmacKey,
  hmacVerify,
  singleHeader,
  headerValues,
  toList,
  type Body,
  type HeadersLike,
  type VerifyFailure,
} from './common.js';
import { base64Decode, concat, utf8, type Bytes } from './encoding.js';

/**
 * Standard Webhooks (standardwebhooks.com; what Svix sends and what
 * streamgate sends for `outboundSigning: standard` queues):
 *
 *   webhook-id:        the message id (streamgate: the event id)
 *   webhook-timestamp: Unix seconds of this attempt
 *   webhook-signature: space-separated entries, any of which may match:
 *                      v1,<base64 HMAC-SHA256(key, "{id}.{timestamp}.{body}")>   key from a whsec_ secret
 *                      v1a,<base64 Ed25519 signature of the same content>        checked with a whpk_ public key
 *
 * The `svix-id` / `svix-timestamp` / `svix-signature` names are read when the
 * `webhook-` ones are absent.
 */
export interface VerifyStandardInput {
  /** The raw body as received (bytes, or the same bytes as text): never re-serialised JSON. */
  body: Body;
  headers: HeadersLike;
  /** Symmetric secrets, `whsec_<base64 key>` (the prefix is optional): any may match (rotation). */
  secrets?: string | readonly string[];
  /** Ed25519 public keys, `whpk_<base64 of the 32-byte raw key>` (the prefix is optional). */
  publicKeys?: string | readonly string[];
  /** How far webhook-timestamp may be from now, either way, in seconds (default 300, inclusive). */
  toleranceSeconds?: number;
  /** Now, in epoch milliseconds (default Date.now()). */
  now?: number;
}

export interface VerifyStandardSuccess {
  ok: true;
  /** webhook-id: deduplicate on it (deliveries are at least once). */
  id: string;
  /** webhook-timestamp, Unix seconds. */
  timestamp: number;
  /** The entry that matched: `v1` (HMAC) or `v1a` (Ed25519). */
  version: 'v1' | 'v1a';
  /** Index of the secret (v1) or public key (v1a) that matched, in the order given. */
  keyIndex: number;
}

export type VerifyStandardResult = VerifyStandardSuccess | VerifyFailure;

/** At most this many signature entries are tried (a header cannot make us do unbounded work). */
const MAX_ENTRIES = 16;

export async function verifyStandard(input: VerifyStandardInput): Promise<VerifyStandardResult> {
  const secrets = toList(input.secrets).map(secretKeyBytes);
  const publicKeys = toList(input.publicKeys).map(publicKeyBytes);
  if (secrets.length === 0 && publicKeys.length === 0) throw new TypeError('verifyStandard needs at least one secret (whsec_…) or public key (whpk_…)');

  const prefix = headerValues(input.headers, 'webhook-id').length === 0 && headerValues(input.headers, 'svix-id').length > 0 ? 'svix' : 'webhook';
  const id = singleHeader(input.headers, `${prefix}-id`);
  if (typeof id !== 'string') return id;
  const rawTimestamp = singleHeader(input.headers, `${prefix}-timestamp`);
  if (typeof rawTimestamp !== 'string') return rawTimestamp;
  const signatureValues = headerValues(input.headers, `${prefix}-signature`);
  if (signatureValues.length === 0) return fail('missing_header', `${prefix}-signature is missing`);

  const entries = parseEntries(signatureValues.join(' '));
  if (entries.length === 0) return fail('bad_format', `${prefix}-signature holds no "v1,<base64>" or "v1a,<base64>" entry`);

  const timestamp = checkTimestamp(rawTimestamp, `${prefix}-timestamp`, input.toleranceSeconds, input.now);
  if (typeof timestamp !== 'number') return timestamp;

  const signed = concat(utf8(`${id}.${rawTimestamp}.`), bodyBytes(input.body));
  const v1 = entries.filter((e) => e.version === 'v1');
  const v1a = entries.filter((e) => e.version === 'v1a');
  if (v1.length > 0) {
    for (let i = 0; i < secrets.length; i++) {
      const key = await hmacKey(secrets[i]!);
      for (const e of v1) if (await hmacVerify(key, e.signature, signed)) return { ok: true, id, timestamp, version: 'v1', keyIndex: i };
    }
  }
  if (v1a.length > 0) {
    for (let i = 0; i < publicKeys.length; i++) {
      const key = await ed25519Key(publicKeys[i]!);
      for (const e of v1a) if (await ed25519Verify(key, e.signature, signed)) return { ok: true, id, timestamp, version: 'v1a', keyIndex: i };
    }
  }
  const tried = [v1.length > 0 && secrets.length > 0 ? `${v1.length} v1 against ${secrets.length} secret(s)` : '', v1a.length > 0 && publicKeys.length > 0 ? `${v1a.length} v1a against ${publicKeys.length} public key(s)` : '']
    .filter(Boolean)
    .join(', ');
  return fail('no_matching_signature', `no signature entry verifies (${tried || 'no entry of a kind a key was given for'})`);
}

interface Entry {
  version: 'v1' | 'v1a';
  signature: Bytes;
}

/** `v1,abc= v1a,def=` → entries; other versions and undecodable entries are skipped. */
function parseEntries(value: string): Entry[] {
  const out: Entry[] = [];
  for (const token of value.split(/\s+/)) {
    if (out.length >= MAX_ENTRIES) break;
    // A Headers instance joins repeated headers with ", ": drop that trailing comma.
    const entry = token.endsWith(',') && token.indexOf(',') !== token.length - 1 ? token.slice(0, -1) : token;
    const comma = entry.indexOf(',');
    if (comma <= 0) continue;
    const version = entry.slice(0, comma);
    if (version !== 'v1' && version !== 'v1a') continue;
    const signature = base64Decode(entry.slice(comma + 1));
    if (signature === null || signature.length === 0) continue;
    out.push({ version, signature });
  }
  return out;
}

function secretKeyBytes(secret: string): Bytes {
  const bytes = base64Decode(secret.startsWith('whsec_') ? secret.slice(6) : secret);
  if (bytes === null || bytes.length === 0) throw new TypeError('a Standard Webhooks secret must be whsec_ followed by base64');
  return bytes;
}

function publicKeyBytes(key: string): Bytes {
  const bytes = base64Decode(key.startsWith('whpk_') ? key.slice(5) : key);
  if (bytes === null || bytes.length !== 32) throw new TypeError('a Standard Webhooks public key must be whpk_ followed by the base64 of 32 bytes (a raw Ed25519 key)');
  return bytes;
}
