import { ServiceError } from '../errors.js';
import type { ContextSources } from './queue-directory.js';

// C0 controls except HTAB, DEL, and U+FFFD: header bytes are decoded as UTF-8
// with U+FFFD where they were not valid UTF-8.
const BAD = /[\u0000-\u0008\u000a-\u001f\u007f\ufffd]/;

/**
 * Refuses a request whose header values carry control characters or bytes that
 * are not UTF-8 (400 invalid_header), naming the header. Headers the queue reads
 * a context value from are only checked for UTF-8 here: their control
 * characters get the reference's own code (context_*_invalid) from the context
 * step. The parser passes CR-free values with NUL and other controls on to
 * this check, so they are refused with the header's name.
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

/**
 * Idempotency-Key: printable text (any UTF-8 except controls), at most `maxBytes`.
 * `header` names another header that stands for it (an inbound source's delivery id).
 */
export function checkIdempotencyKey(value: string | undefined, maxBytes: number, header = 'idempotency-key'): string | null {
  if (value === undefined || value === '') return null;
  const label = header === 'idempotency-key' ? 'Idempotency-Key' : header;
  if (/[\u0000-\u001f\u007f-\u009f]/.test(value)) {
    throw new ServiceError('invalid_header', `The ${label} header holds control characters.`, { header });
  }
  if (Buffer.byteLength(value) > maxBytes) {
    throw new ServiceError('invalid_header', `The ${label} header is over the limit of ${maxBytes} bytes.`, { header });
  }
  return value;
}
