import { createHash, createHmac } from 'node:crypto';

/**
 * The canonical strings of contract §3 (HMAC-SHA256, lowercase hex). Lines are
 * joined with "\n", no trailing newline:
 *
 *   v1:  METHOD  PATH  QUERY  X-Service-Timestamp  X-Service-Nonce  BODY_SHA256
 *   v2:  the v1 lines, then X-Service-Event-Id, then Idempotency-Key ("" when none)
 *
 * PATH is the path as sent on the wire (percent-encoded); QUERY is the
 * parameters re-encoded per RFC 3986 and sorted (see canonicalQuery).
 */
export interface V1Fields {
  method: string;
  path: string;
  /** Raw query string, without "?". */
  query: string;
  timestamp: string;
  nonce: string;
  bodySha256: string;
}

export function sha256Hex(body: Buffer | string): string {
  return createHash('sha256').update(body).digest('hex');
}

export function hmacHex(secret: string, text: string): string {
  return createHmac('sha256', secret).update(text).digest('hex');
}

export function v1Canonical(f: V1Fields): string {
  return [f.method.toUpperCase(), f.path, canonicalQuery(f.query), f.timestamp, f.nonce, f.bodySha256].join('\n');
}

export function v2Canonical(f: V1Fields, eventId: string, idempotencyKey: string | null): string {
  return `${v1Canonical(f)}\n${eventId}\n${idempotencyKey ?? ''}`;
}

const HEX = '0123456789ABCDEF';

/** Unreserved characters of RFC 3986 §2.3 stay as they are; every other byte is %XX (upper case). */
function encodeBytes(bytes: Buffer): string {
  let out = '';
  for (const b of bytes) {
    const unreserved = (b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a) || (b >= 0x30 && b <= 0x39) || b === 0x2d || b === 0x2e || b === 0x5f || b === 0x7e;
    out += unreserved ? String.fromCharCode(b) : `%${HEX[b >> 4]}${HEX[b & 15]}`;
  }
  return out;
}

/**
 * Percent-decodes to bytes. "+" is a literal plus (RFC 3986 has no
 * form-encoding), and a "%" not followed by two hex digits stays literal, so
 * any query string, even a malformed one, has exactly one canonical form.
 */
function decodeToBytes(text: string): Buffer {
  const bytes: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x25 && /^[0-9A-Fa-f]{2}$/.test(text.slice(i + 1, i + 3))) {
      bytes.push(parseInt(text.slice(i + 1, i + 3), 16));
      i += 2;
    } else if (c < 0x80) {
      bytes.push(c);
    } else {
      // A raw non-ASCII character: its UTF-8 bytes (surrogate pairs kept together).
      const cp = text.codePointAt(i)!;
      const ch = String.fromCodePoint(cp);
      for (const b of Buffer.from(ch, 'utf8')) bytes.push(b);
      i += ch.length - 1;
    }
  }
  return Buffer.from(bytes);
}

/**
 * QUERY of contract §3: each parameter's name and value percent-encoded per
 * RFC 3986, sorted by name then value, joined as name=value with "&"; empty
 * when there is none. A parameter without "=" has an empty value.
 */
export function canonicalQuery(raw: string): string {
  const query = raw.startsWith('?') ? raw.slice(1) : raw;
  if (query === '') return '';
  const pairs: Array<[string, string]> = [];
  for (const part of query.split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    const name = eq === -1 ? part : part.slice(0, eq);
    const value = eq === -1 ? '' : part.slice(eq + 1);
    pairs.push([encodeBytes(decodeToBytes(name)), encodeBytes(decodeToBytes(value))]);
  }
  // Encoded strings are ASCII, so comparing code units is comparing bytes.
  pairs.sort(([an, av], [bn, bv]) => (an < bn ? -1 : an > bn ? 1 : av < bv ? -1 : av > bv ? 1 : 0));
  return pairs.map(([n, v]) => `${n}=${v}`).join('&');
}
