import { createHmac, hash, timingSafeEqual } from 'node:crypto';
import { secretMatches } from './api-key.js';
import { sourceSignatureMatches } from './source-signatures.js';

/**
 * The CPU-bound part of ingress authentication as plain data in, verdict out,
 * so the same functions run inline on the event loop or, batched, in the
 * piscina validation pool (validation-pool.ts). Every comparison of something secret
 * is constant-time. Jobs carry the secrets they need: they never leave the
 * process (worker threads share it).
 */
export type CheckJob =
  /** An API key: SHA-256 of the presented secret against the stored hash. */
  | { k: 'key'; secret: string; hash: Uint8Array }
  /**
   * A signed request (docs/api.md#authentication): `head` is the canonical string up to and
   * including the nonce line and its newline; the body hash completes it.
   */
  | { k: 'signed'; secret: string; head: string; body: Uint8Array; contentSha: string; signature: string }
  /** A Payments-Signature: HMAC-SHA256(secret, "<t>.<raw body>") against each presented v1. */
  | { k: 'payments'; secret: string; timestamp: string; body: Uint8Array; signatures: readonly string[] }
  /**
   * An inbound source (standard_webhooks, github, shopify; source-signatures.ts):
   * HMAC-SHA256(key, prefix ‖ raw body) against each presented MAC (32 bytes each).
   */
  | { k: 'source'; key: Uint8Array; prefix: string; body: Uint8Array; candidates: readonly Uint8Array[] };

/** `content_mismatch`: X-Service-Content-SHA256 is not the hash of the body. */
export type CheckVerdict = 'ok' | 'mismatch' | 'content_mismatch';

export function runCheck(job: CheckJob): CheckVerdict {
  switch (job.k) {
    case 'key':
      return secretMatches(job.secret, job.hash) ? 'ok' : 'mismatch';
    case 'signed': {
      const bodySha = hash('sha256', job.body, 'hex');
      // Not secret, but compared exactly: lowercase hex of the raw body.
      if (bodySha !== job.contentSha) return 'content_mismatch';
      const expected = createHmac('sha256', job.secret).update(job.head).update(bodySha).digest('hex');
      return sameText(expected, job.signature) ? 'ok' : 'mismatch';
    }
    case 'payments': {
      const expected = createHmac('sha256', job.secret).update(`${job.timestamp}.`).update(job.body).digest('hex');
      let ok = false;
      // Every candidate is compared (no early exit), as Stripe's libraries do.
      for (const candidate of job.signatures) if (sameText(expected, candidate)) ok = true;
      return ok ? 'ok' : 'mismatch';
    }
    case 'source':
      return sourceSignatureMatches(job, job.body) ? 'ok' : 'mismatch';
  }
}

/** Runs a batch (one pool task): one verdict per job, in order. */
export function runChecks(jobs: readonly CheckJob[]): CheckVerdict[] {
  return jobs.map(runCheck);
}

function sameText(expected: string, presented: string): boolean {
  // Lengths are public (64 hex characters); only the content is compared in constant time.
  if (expected.length !== presented.length) return false;
  return timingSafeEqual(Buffer.from(expected, 'latin1'), Buffer.from(presented, 'latin1'));
}
