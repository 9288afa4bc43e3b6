/**
 * The QUERY line of the canonical strings (docs/api.md#authentication): every parameter's
 * name and value percent-decoded, then percent-encoded per RFC 3986
 * (unreserved characters as they are, everything else as upper-case `%XX` of
 * its UTF-8 bytes), sorted by name then value, joined as `name=value` with
 * `&`. Empty when there is no parameter.
 *
 * Decoding works on bytes, so a query that is not valid UTF-8 or holds a stray
 * `%` still has exactly one canonical form (a `%` that starts no valid escape
 * stays a literal `%`, which encodes as `%25`). `+` is an RFC 3986 sub-delimiter,
 * not a space: it encodes as `%2B`, the same on both sides.
 */
export function canonicalQuery(raw: string): string {
  // `raw` is the query without its leading "?" (a further "?" is data).
  if (raw === '') return '';
  const pairs: Array<[string, string]> = [];
  for (const part of raw.split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    const name = eq === -1 ? part : part.slice(0, eq);
    const value = eq === -1 ? '' : part.slice(eq + 1);
    pairs.push([encodeRfc3986(decodeBytes(name)), encodeRfc3986(decodeBytes(value))]);
  }
  // Encoded forms are ASCII, so code-unit order is byte order on both sides.
  pairs.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0));
  let out = '';
  for (let i = 0; i < pairs.length; i++) out += `${i === 0 ? '' : '&'}${pairs[i]![0]}=${pairs[i]![1]}`;
  return out;
}

const HEX = '0123456789ABCDEF';

function hexValue(code: number): number {
  if (code >= 48 && code <= 57) return code - 48;
  if (code >= 65 && code <= 70) return code - 55;
  if (code >= 97 && code <= 102) return code - 87;
  return -1;
}

/** Percent-decodes into bytes; characters outside escapes are taken as their UTF-8 bytes. */
function decodeBytes(s: string): Buffer {
  if (!s.includes('%')) return Buffer.from(s, 'utf8');
  const bytes: number[] = [];
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 37 /* % */ && i + 2 < s.length && hexValue(s.charCodeAt(i + 1)) >= 0 && hexValue(s.charCodeAt(i + 2)) >= 0) {
      bytes.push(hexValue(s.charCodeAt(i + 1)) * 16 + hexValue(s.charCodeAt(i + 2)));
      i += 2;
    } else if (c < 0x80) {
      bytes.push(c);
    } else {
      // A non-ASCII character (the raw query is not supposed to hold one, but
      // may): its UTF-8 bytes, taking a surrogate pair as one code point.
      const cp = s.codePointAt(i)!;
      if (cp > 0xffff) i++;
      for (const b of Buffer.from(String.fromCodePoint(cp), 'utf8')) bytes.push(b);
    }
  }
  return Buffer.from(bytes);
}

function isUnreserved(b: number): boolean {
  return (b >= 65 && b <= 90) || (b >= 97 && b <= 122) || (b >= 48 && b <= 57) || b === 45 || b === 46 || b === 95 || b === 126;
}

/** RFC 3986 encoding of bytes: unreserved as is, the rest `%XX` upper case. */
export function encodeRfc3986(bytes: Uint8Array): string {
  let out = '';
  for (const b of bytes) out += isUnreserved(b) ? String.fromCharCode(b) : `%${HEX[b >> 4]}${HEX[b & 15]}`;
  return out;
}
