import { utf8 } from './encoding.js';

/**
 * The QUERY line of streamgate's canonical strings (docs/api.md#canonical-strings),
 * the same as src/auth/canonical-query.ts but with nothing but TextEncoder:
 * every `name=value` pair percent-decoded into bytes (a `%` that starts no
 * valid escape is a literal `%`; `+` is a literal plus), re-encoded per
 * RFC 3986 (unreserved as they are, every other byte `%XX` upper case),
 * sorted by name then value, joined with `&`. Empty when there is no parameter.
 */
export function canonicalQuery(raw: string): string {
  if (raw === '') return '';
  const pairs: Array<[string, string]> = [];
  for (const part of raw.split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    const name = eq === -1 ? part : part.slice(0, eq);
    const value = eq === -1 ? '' : part.slice(eq + 1);
    pairs.push([encodeRfc3986(decodeBytes(name)), encodeRfc3986(decodeBytes(value))]);
  }
  pairs.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0));
  return pairs.map(([n, v]) => `${n}=${v}`).join('&');
}

const HEX = '0123456789ABCDEF';

function hexValue(code: number): number {
  if (code >= 48 && code <= 57) return code - 48;
  if (code >= 65 && code <= 70) return code - 55;
  if (code >= 97 && code <= 102) return code - 87;
  return -1;
}

function decodeBytes(s: string): number[] {
  const bytes: number[] = [];
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 37 /* % */ && i + 2 < s.length && hexValue(s.charCodeAt(i + 1)) >= 0 && hexValue(s.charCodeAt(i + 2)) >= 0) {
      bytes.push(hexValue(s.charCodeAt(i + 1)) * 16 + hexValue(s.charCodeAt(i + 2)));
      i += 2;
    } else if (c < 0x80) {
      bytes.push(c);
    } else {
      const cp = s.codePointAt(i)!;
      if (cp > 0xffff) i++;
      for (const b of utf8(String.fromCodePoint(cp))) bytes.push(b);
    }
  }
  return bytes;
}

function isUnreserved(b: number): boolean {
  return (b >= 65 && b <= 90) || (b >= 97 && b <= 122) || (b >= 48 && b <= 57) || b === 45 || b === 46 || b === 95 || b === 126;
}

function encodeRfc3986(bytes: readonly number[]): string {
  let out = '';
  for (const b of bytes) out += isUnreserved(b) ? String.fromCharCode(b) : `%${HEX[b >> 4]}${HEX[b & 15]}`;
  return out;
}
