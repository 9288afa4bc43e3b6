import { errorEnvelope, ServiceError } from '../errors.js';
import type { Exchange } from '../http/exchange.js';

// C0 controls except HTAB, DEL, and U+FFFD: the HTTP layer decodes header bytes
// as UTF-8 and puts U+FFFD where they were not valid UTF-8.
const BAD = /[\u0000-\u0008\u000a-\u001f\u007f\ufffd]/;

/**
 * Refuses a request whose header values carry control characters or bytes that
 * are not UTF-8 (400 invalid_header), naming the header. uWS's parser already
 * drops requests with CR, LF or NUL inside a header line before they reach us;
 * this is the check for what it lets through.
 */
export function checkHeaderValues(headers: Readonly<Record<string, string>>): void {
  for (const name in headers) {
    if (BAD.test(headers[name]!)) {
      throw new ServiceError('invalid_header', `The ${name} header holds control characters or bytes that are not UTF-8.`, { header: name });
    }
  }
}

/** Idempotency-Key: printable text (any UTF-8 except controls), at most `maxBytes`. */
export function checkIdempotencyKey(value: string | undefined, maxBytes: number): string | null {
  if (value === undefined || value === '') return null;
  if (/[\u0000-\u001f\u007f-\u009f]/.test(value)) {
    throw new ServiceError('invalid_header', 'The Idempotency-Key header holds control characters.', { header: 'idempotency-key' });
  }
  if (Buffer.byteLength(value) > maxBytes) {
    throw new ServiceError('invalid_header', `The Idempotency-Key header is over the limit of ${maxBytes} bytes.`, { header: 'idempotency-key' });
  }
  return value;
}

/**
 * Refuses ambiguous body framing (RFC 9112 §6.3): Content-Length that is not
 * one number (several differing headers arrive joined as "5, 7") or together
 * with Transfer-Encoding. uWS picks one reading and carries on; another hop
 * might pick the other, which is how requests are smuggled. The answer closes
 * the connection, since the bytes after this request cannot be trusted.
 * Returns true when it answered.
 */
export function refuseAmbiguousFraming(exchange: Exchange): boolean {
  const length = exchange.headers['content-length'];
  const badLength = length !== undefined && !/^\d{1,15}$/.test(length);
  if (!badLength && (length === undefined || exchange.headers['transfer-encoding'] === undefined)) return false;
  const err = new ServiceError('invalid_header', 'The request has conflicting or malformed Content-Length / Transfer-Encoding headers.', { header: 'content-length' });
  exchange.send(err.status, errorEnvelope(err), { 'content-type': 'application/json' }, true);
  return true;
}
