import { ServiceError } from '../errors.js';
import type { Exchange } from '../http/exchange.js';
import type { ContextSources } from './queue-directory.js';

// C0 controls except HTAB, DEL, and U+FFFD: header bytes are decoded as UTF-8
// with U+FFFD where they were not valid UTF-8.
const BAD = /[\u0000-\u0008\u000a-\u001f\u007f\ufffd]/;

/**
 * Refuses a request whose header values carry control characters or bytes that
 * are not UTF-8 (400 invalid_header), naming the header. Headers the queue reads
 * a context value from are only checked for UTF-8 here: their control
 * characters get the reference's own code (context_*_invalid) from the context
 * step. With the header guard on, CR, NUL and other controls reach this check
 * (re-encoded by the guard); without it uWS drops such requests unanswered.
 */
export function checkHeaderValues(headers: Readonly<Record<string, string>>, sources: Readonly<ContextSources>): void {
  for (const name in headers) {
    const value = headers[name]!;
    if (!BAD.test(value)) continue;
    if (isContextHeader(name, sources) && !value.includes('\ufffd')) continue;
    throw new ServiceError('invalid_header', `The ${name} header holds control characters or bytes that are not UTF-8.`, { header: name });
  }
}

function isContextHeader(name: string, sources: Readonly<ContextSources>): boolean {
  for (const ref of [sources.eventType, sources.groupKey, sources.partitionKey]) {
    if (ref.source === 'header' && ref.name.toLowerCase() === name) return true;
  }
  return false;
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
  exchange.sendError(new ServiceError('invalid_header', 'The request has conflicting or malformed Content-Length / Transfer-Encoding headers.', { header: 'content-length' }), undefined, true);
  return true;
}
