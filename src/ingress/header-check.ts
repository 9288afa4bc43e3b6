import { ServiceError } from '../errors.js';

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
