/**
 * Bytes, text, base64 and hex with nothing but TextEncoder: no Buffer, no
 * node: module, so the verifier runs in Node, Deno, Bun, browsers and edge
 * runtimes alike.
 */

const encoder = new TextEncoder();

/** The bytes Web Crypto takes (an ArrayBuffer-backed view). */
export type Bytes = Uint8Array<ArrayBuffer>;

export function utf8(text: string): Bytes {
  return encoder.encode(text) as Bytes;
}

/** A body as received: text is taken as its UTF-8 bytes, bytes as they are. */
export function bodyBytes(body: string | Uint8Array | ArrayBuffer): Bytes {
  if (typeof body === 'string') return utf8(body);
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  // A copy: Web Crypto wants an ArrayBuffer-backed view (a Node Buffer may share a pool).
  return new Uint8Array(body);
}

export function concat(...parts: Uint8Array[]): Bytes {
  let length = 0;
  for (const p of parts) length += p.length;
  const out = new Uint8Array(length);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const B64_VALUE = new Int16Array(128).fill(-1);
for (let i = 0; i < 64; i++) B64_VALUE[B64.charCodeAt(i)] = i;
B64_VALUE['-'.charCodeAt(0)] = 62; // base64url
B64_VALUE['_'.charCodeAt(0)] = 63;

/**
 * Decodes standard or URL-safe base64, padding optional; null when the text
 * is not base64 (a character outside both alphabets, or a length no
 * encoding produces).
 */
export function base64Decode(text: string): Bytes | null {
  let end = text.length;
  while (end > 0 && text.charCodeAt(end - 1) === 61 /* = */) end--;
  if (text.length - end > 2 || end % 4 === 1) return null;
  if (text.length !== end && text.length % 4 !== 0) return null;
  const out = new Uint8Array(Math.floor((end * 3) / 4));
  let bits = 0;
  let acc = 0;
  let at = 0;
  for (let i = 0; i < end; i++) {
    const c = text.charCodeAt(i);
    const v = c < 128 ? B64_VALUE[c]! : -1;
    if (v < 0) return null;
    acc = (acc << 6) | v;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[at++] = (acc >> bits) & 0xff;
    }
  }
  return out;
}

/** Standard base64 with padding. */
export function base64Encode(bytes: Uint8Array): string {
  let out = '';
  let i = 0;
  for (; i + 2 < bytes.length; i += 3) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8) | bytes[i + 2]!;
    out += B64[n >> 18]! + B64[(n >> 12) & 63]! + B64[(n >> 6) & 63]! + B64[n & 63]!;
  }
  if (i < bytes.length) {
    const n = (bytes[i]! << 16) | ((bytes[i + 1] ?? 0) << 8);
    out += B64[n >> 18]! + B64[(n >> 12) & 63]! + (i + 1 < bytes.length ? B64[(n >> 6) & 63]! : '=') + '=';
  }
  return out;
}

/** Hex digits (either case) to bytes; null when the text is not hex. */
export function hexDecode(text: string): Bytes | null {
  if (text.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(text)) return null;
  const out = new Uint8Array(text.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(text.slice(i * 2, i * 2 + 2), 16);
  return out;
}

export function hexEncode(bytes: Uint8Array): string {
  let out = '';
  for (const b of bytes) out += (b < 16 ? '0' : '') + b.toString(16);
  return out;
}
