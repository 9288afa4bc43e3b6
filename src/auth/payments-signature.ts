import { ServiceError } from '../errors.js';

/**
 * The Payments-Signature header of a payment processor (docs/api.md#authentication), in the
 * scheme Stripe's libraries use: `t=<unix seconds>,v1=<hex>[,v1=<hex>…]` where
 * each v1 is HMAC-SHA256(secret, "<t>.<raw body>"). Several v1 entries appear
 * while the processor rotates secrets; any one matching is enough. Other
 * schemes (v0, …) are ignored, as Stripe does.
 */
export interface PaymentsSignature {
  timestamp: string;
  signatures: string[];
}

const HEX64 = /^[0-9a-f]{64}$/;

export function parsePaymentsSignature(header: string | undefined): PaymentsSignature {
  if (header === undefined || header === '') {
    throw new ServiceError('invalid_signature', 'This queue requires a Payments-Signature header.');
  }
  let timestamp: string | null = null;
  const signatures: string[] = [];
  for (const item of header.split(',')) {
    const eq = item.indexOf('=');
    if (eq === -1) continue;
    const name = item.slice(0, eq).trim();
    const value = item.slice(eq + 1).trim();
    if (name === 't') timestamp = value;
    // A malformed v1 can never match: dropping it keeps the comparison constant-length.
    else if (name === 'v1' && HEX64.test(value)) signatures.push(value);
  }
  if (timestamp === null || signatures.length === 0) {
    throw new ServiceError('invalid_signature', 'Payments-Signature must be t=<unix seconds>,v1=<hex signature>.');
  }
  // Bounded: a header with thousands of entries must not cost thousands of HMAC compares.
  return { timestamp, signatures: signatures.slice(0, 8) };
}
