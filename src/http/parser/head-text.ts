/**
 * Strings out of a request head's bytes, made once per request for every
 * field a handler reads: Buffer's own slicers, without Buffer#toString's
 * argument and encoding dispatch (they are public methods of Node's Buffer,
 * as utf8Write is for the msgpack writer), and the field names requests
 * usually carry as the interned constants they are, not a new string per request.
 */
type Sliceable = Buffer & { latin1Slice(start: number, end: number): string; utf8Slice(start: number, end: number): string };

/** Bytes [start, end) as Latin-1 (what the head's ASCII-only parts are read as). */
export function latin1(h: Buffer, start: number, end: number): string {
  return (h as Sliceable).latin1Slice(start, end);
}

/** Bytes [start, end) as UTF-8 (bytes that are not become U+FFFD). */
export function utf8(h: Buffer, start: number, end: number): string {
  return (h as Sliceable).utf8Slice(start, end);
}

/** Field names an ingress request usually carries, by length: matched byte by byte, case-insensitively. */
const KNOWN_NAMES = [
  'accept', 'accept-encoding', 'accept-language', 'authorization', 'cache-control', 'content-type', 'content-encoding', 'cookie',
  'forwarded', 'idempotency-key', 'origin', 'referer', 'traceparent', 'tracestate', 'user-agent', 'x-api-key',
  'x-forwarded-for', 'x-forwarded-proto', 'x-real-ip', 'x-request-id', 'x-service-path', 'x-service-event-type',
  'x-service-group-key', 'x-service-partition-key', 'x-signature', 'x-timestamp', 'x-nonce', 'x-key-id',
];
const KNOWN_BY_LENGTH: Array<string[] | undefined> = [];
for (const name of KNOWN_NAMES) (KNOWN_BY_LENGTH[name.length] ??= []).push(name);

/** The lower-case name of the field whose name is at [start, end). */
export function fieldName(h: Buffer, start: number, end: number): string {
  const candidates = KNOWN_BY_LENGTH[end - start];
  if (candidates !== undefined) {
    for (const name of candidates) if (sameLower(h, start, name)) return name;
  }
  const raw = latin1(h, start, end);
  // Most clients send lower-case names (HTTP/2 habits): no second string then.
  for (let i = start; i < end; i++) if (h[i]! >= 0x41 && h[i]! <= 0x5a) return raw.toLowerCase();
  return raw;
}

/** The bytes at `start` spell `lower` (its letters in either case; `lower` holds no upper-case letter). */
function sameLower(h: Buffer, start: number, lower: string): boolean {
  for (let i = 0; i < lower.length; i++) {
    const b = h[start + i]!;
    const c = lower.charCodeAt(i);
    if (b !== c && !(c >= 0x61 && c <= 0x7a && b === c - 0x20)) return false;
  }
  return true;
}
