import { createHmac, sign, type KeyObject } from 'node:crypto';
import { randomBytesPooled } from '../../ids.js';
import { hmacHex, sha256Hex, v1Canonical, v2Canonical, type V1Fields } from './canonical.js';

/** A workspace signing key (docs/api.md#authentication): its id travels in X-Service-Key-Id. */
export interface SigningKey {
  keyId: string;
  secret: string;
}

/**
 * A workspace's ed25519 signing key, its private key parsed once (SigningPlans
 * caches it): it signs only the `v1a` entries of Standard Webhooks deliveries.
 */
export interface Ed25519SigningKey {
  algorithm: 'ed25519';
  keyId: string;
  privateKey: KeyObject;
}

/** A key a `standard` delivery is signed with: HMAC (a `v1` entry) or ed25519 (a `v1a` entry). */
export type StandardKey = SigningKey | Ed25519SigningKey;

/**
 * The outbound HMAC headers of one attempt (docs/api.md#authentication), made
 * afresh for every attempt: a new timestamp and nonce each time, so a captured
 * request cannot be replayed past the receiver's tolerance.
 *
 *   X-Service-Key-Id, X-Service-Timestamp, X-Service-Nonce, X-Service-Content-SHA256
 *   X-Service-Signature:  hex HMAC of the v1 string
 *   X-Service-Signatures: v2=<hex HMAC of the v2 string>
 *
 * Mapped and group-key headers are not covered (docs/api.md#ingress).
 */
export function signatureHeaders(
  key: SigningKey,
  request: { url: URL; body: Buffer; eventId: string; idempotencyKey: string | null },
  nowMs: number,
): Record<string, string> {
  const fields: V1Fields = {
    method: 'POST',
    path: request.url.pathname,
    query: request.url.search.slice(1),
    timestamp: String(Math.floor(nowMs / 1000)),
    nonce: randomBytesPooled(16).toString('hex'),
    bodySha256: sha256Hex(request.body),
  };
  return {
    'x-service-key-id': key.keyId,
    'x-service-timestamp': fields.timestamp,
    'x-service-nonce': fields.nonce,
    'x-service-content-sha256': fields.bodySha256,
    'x-service-signature': hmacHex(key.secret, v1Canonical(fields)),
    'x-service-signatures': `v2=${hmacHex(key.secret, v2Canonical(fields, request.eventId, request.idempotencyKey))}`,
  };
}

/**
 * Payments-Signature recalculation (docs/api.md#authentication): `t=<unix seconds>,v1=<hex
 * HMAC(secret, "<t>.<raw body>")>`, the scheme Stripe's libraries verify. Only
 * timestamp and body are covered (docs/api.md#ingress).
 */
export function paymentsSignature(secret: string, body: Buffer, nowMs: number): string {
  const t = Math.floor(nowMs / 1000);
  // The body is hashed as the raw bytes received, never decoded as text.
  const mac = createHmac('sha256', secret).update(`${t}.`).update(body).digest('hex');
  return `t=${t},v1=${mac}`;
}

/**
 * The key bytes Standard Webhooks signing feeds to HMAC: the random part of
 * the workspace secret (`whsec_<base64url>`), decoded. `standardSecret` hands
 * the same bytes to receivers in the form their libraries take.
 */
export function standardKeyBytes(secret: string): Buffer {
  return Buffer.from(secret.startsWith('whsec_') ? secret.slice(6) : secret, 'base64url');
}

/** `whsec_<standard base64 of the key bytes>`: what `new Webhook(secret)` of standardwebhooks / svix takes. */
export function standardSecret(secret: string): string {
  return `whsec_${standardKeyBytes(secret).toString('base64')}`;
}

/**
 * Standard Webhooks headers of one attempt (standardwebhooks.com; what Svix
 * sends): `webhook-id` (the event id, the same on every retry and
 * redelivery), `webhook-timestamp` (Unix seconds of this attempt) and
 * `webhook-signature`, space-separated: a `v1,<base64 HMAC-SHA256 of
 * "{id}.{timestamp}.{raw body}">` per active HMAC key, then a `v1a,<base64
 * ed25519 signature of the same bytes>` per active ed25519 key, each newest
 * first, so a receiver holding any one key verifies during a rotation.
 */
export function standardHeaders(keys: readonly StandardKey[], request: { eventId: string; body: Buffer }, nowMs: number): Record<string, string> {
  const timestamp = String(Math.floor(nowMs / 1000));
  const prefix = `${request.eventId}.${timestamp}.`;
  const v1: string[] = [];
  const v1a: string[] = [];
  let signed: Buffer | null = null;
  for (const key of keys) {
    if ('privateKey' in key) {
      signed ??= Buffer.concat([Buffer.from(prefix), request.body]);
      v1a.push(`v1a,${sign(null, signed, key.privateKey).toString('base64')}`);
    } else {
      v1.push(`v1,${createHmac('sha256', standardKeyBytes(key.secret)).update(prefix).update(request.body).digest('base64')}`);
    }
  }
  return { 'webhook-id': request.eventId, 'webhook-timestamp': timestamp, 'webhook-signature': [...v1, ...v1a].join(' ') };
}
