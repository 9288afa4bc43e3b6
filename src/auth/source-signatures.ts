import { createHmac, timingSafeEqual } from 'node:crypto';
import { ServiceError } from '../errors.js';

/**
 * Inbound sources (docs/api.md#ingress-auth-modes): webhooks sent by a provider that
 * cannot send an API key, each verified over the raw body with the queue's
 * `sourceSecret`. Pure functions: header parsing here (refusals as
 * ServiceErrors), the HMAC comparison in `sourceSignatureMatches`, which the
 * validation pool runs (crypto-checks.ts).
 *
 *   standard_webhooks  webhook-signature: `v1,<base64>` entries (space-separated)
 *                      of HMAC-SHA256(base64-decoded whsec_ key, "<id>.<t>.<body>")
 *   github             X-Hub-Signature-256: `sha256=<hex HMAC-SHA256(secret, body)>`
 *   shopify            X-Shopify-Hmac-Sha256: `<base64 HMAC-SHA256(secret, body)>`
 */

/** Every signature here is an HMAC-SHA256: 32 bytes. */
const MAC_BYTES = 32;
const HEX64 = /^[0-9a-fA-F]{64}$/;
/** 32 bytes in standard base64: 43 characters and one `=`. */
const BASE64_MAC = /^[A-Za-z0-9+/]{43}=$/;
/** Standard base64 (padding optional), as Standard Webhooks libraries decode a whsec_ secret. */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}(?:==)?|[A-Za-z0-9+/]{3}=?)?$/;
/** A header with thousands of entries must not cost thousands of comparisons. */
const MAX_CANDIDATES = 8;

/** What to check: HMAC-SHA256(key, prefix ‖ body) against each candidate (raw MAC bytes). */
export interface SourceCheck {
  key: Uint8Array;
  /** Signed before the body: `<id>.<timestamp>.` for Standard Webhooks, empty otherwise. */
  prefix: string;
  candidates: readonly Uint8Array[];
}

/**
 * The HMAC key of a Standard Webhooks secret: the bytes the base64 after
 * `whsec_` encodes, or null when the secret is not of that form.
 */
export function standardWebhooksKey(secret: string): Buffer | null {
  if (!secret.startsWith('whsec_')) return null;
  const encoded = secret.slice('whsec_'.length);
  if (encoded.length === 0 || !BASE64.test(encoded)) return null;
  const key = Buffer.from(encoded, 'base64');
  return key.length > 0 ? key : null;
}

/** The HMAC key of a GitHub or Shopify secret: the secret's UTF-8 bytes, as both providers sign. */
export function textKey(secret: string): Buffer {
  return Buffer.from(secret, 'utf8');
}

export interface StandardWebhooksHeaders {
  id: string;
  timestamp: string;
  candidates: Buffer[];
}

/**
 * webhook-id, webhook-timestamp and webhook-signature. A missing id or
 * signature, or no well-formed `v1,` entry: invalid_signature (other versions
 * are ignored). The timestamp is returned as sent; the caller checks it
 * (timestamp_out_of_range when missing, malformed or outside the skew).
 */
export function parseStandardWebhooks(headers: Readonly<Record<string, string | undefined>>): StandardWebhooksHeaders {
  const id = headers['webhook-id'];
  const signature = headers['webhook-signature'];
  if (!signature) throw new ServiceError('invalid_signature', 'This queue requires a webhook-signature header (Standard Webhooks).');
  if (!id) throw new ServiceError('invalid_signature', 'This queue requires a webhook-id header (Standard Webhooks): it is part of what is signed.');
  const candidates: Buffer[] = [];
  for (const entry of signature.split(' ')) {
    if (!entry.startsWith('v1,')) continue;
    const value = entry.slice(3);
    // A malformed entry can never match: dropped, so every comparison is between 32-byte MACs.
    if (BASE64_MAC.test(value)) candidates.push(Buffer.from(value, 'base64'));
  }
  if (candidates.length === 0) throw new ServiceError('invalid_signature', 'webhook-signature holds no v1,<base64 signature> entry.');
  return { id, timestamp: headers['webhook-timestamp'] ?? '', candidates: candidates.slice(0, MAX_CANDIDATES) };
}

/** What Standard Webhooks signs before the body: `<webhook-id>.<webhook-timestamp>.`. */
export function standardWebhooksPrefix(id: string, timestamp: string): string {
  return `${id}.${timestamp}.`;
}

/** X-Hub-Signature-256: `sha256=<64 hex>` (missing or malformed: invalid_signature). */
export function parseGithubSignature(header: string | undefined): Buffer {
  if (!header) throw new ServiceError('invalid_signature', 'This queue requires an X-Hub-Signature-256 header (GitHub).');
  const value = header.startsWith('sha256=') ? header.slice('sha256='.length) : '';
  if (!HEX64.test(value)) throw new ServiceError('invalid_signature', 'X-Hub-Signature-256 must be sha256=<hex HMAC-SHA256>.');
  return Buffer.from(value, 'hex');
}

/** X-Shopify-Hmac-Sha256: the base64 HMAC (missing or malformed: invalid_signature). */
export function parseShopifyHmac(header: string | undefined): Buffer {
  if (!header) throw new ServiceError('invalid_signature', 'This queue requires an X-Shopify-Hmac-Sha256 header (Shopify).');
  const value = header.trim();
  if (!BASE64_MAC.test(value)) throw new ServiceError('invalid_signature', 'X-Shopify-Hmac-Sha256 must be the base64 HMAC-SHA256 of the body.');
  return Buffer.from(value, 'base64');
}

/**
 * Whether any candidate is HMAC-SHA256(key, prefix ‖ body). Each comparison is
 * constant-time between two 32-byte buffers; every candidate is compared (no
 * early exit).
 */
export function sourceSignatureMatches(check: SourceCheck, body: Uint8Array): boolean {
  const expected = createHmac('sha256', check.key).update(check.prefix).update(body).digest();
  let ok = false;
  for (const candidate of check.candidates) {
    if (candidate.byteLength === MAC_BYTES && timingSafeEqual(expected, candidate)) ok = true;
  }
  return ok;
}
