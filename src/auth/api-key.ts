import { hash, timingSafeEqual } from 'node:crypto';
import { newId, randomBytesPooled } from '../ids.js';

/**
 * API keys on the wire are `qak_<keyId>.<secret>` (docs/api.md#authentication). The key id is
 * the lookup handle; the secret (256 random bits) is never stored, only its
 * SHA-256, which is enough for a high-entropy secret.
 */
export type KeyProfile = 'ingress' | 'full' | 'build';

export interface ParsedApiKey {
  keyId: string;
  secret: string;
}

const KEY_SHAPE = /^qak_(key_[A-Za-z0-9_-]{8,64})\.([A-Za-z0-9_-]{16,128})$/;

/** Splits a presented key; null when it cannot be one of ours (no lookup needed). */
export function parseApiKey(presented: string): ParsedApiKey | null {
  const m = KEY_SHAPE.exec(presented);
  return m ? { keyId: m[1]!, secret: m[2]! } : null;
}

/**
 * SHA-256 of a secret. crypto.hash is the one-shot form: no Hash object (and
 * its native wrapper) per call, which ingress pays on every API-key request.
 */
export function hashSecret(secret: string): Buffer {
  return hash('sha256', secret, 'buffer');
}

/**
 * Constant-time check of a presented secret against the stored hash. The
 * digest comes out as a latin1 ("binary") string and is copied into a pooled Buffer:
 * cheaper than a 'buffer' digest, which gets an ArrayBuffer of its own, and
 * ingress pays this on every API-key request.
 */
export function secretMatches(secret: string, storedHash: Uint8Array): boolean {
  const presented = Buffer.from(hash('sha256', secret, 'binary'), 'latin1');
  return presented.length === storedHash.length && timingSafeEqual(presented, storedHash);
}

/** A fresh key: the wire form (shown once) and what may be stored. */
export function generateApiKey(): { keyId: string; wire: string; secretHash: Buffer } {
  const keyId = newId('key');
  const secret = randomBytesPooled(32).toString('base64url');
  return { keyId, wire: `qak_${keyId}.${secret}`, secretHash: hashSecret(secret) };
}
