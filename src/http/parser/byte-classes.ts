/** Byte tables for the request parser: 1 where the byte is allowed. */
function table(...ranges: Array<string | [number, number]>): Uint8Array {
  const t = new Uint8Array(256);
  for (const r of ranges) {
    if (typeof r === 'string') for (const c of r) t[c.charCodeAt(0)] = 1;
    else for (let c = r[0]; c <= r[1]; c++) t[c] = 1;
  }
  return t;
}
const ALNUM: Array<[number, number]> = [
  [0x30, 0x39],
  [0x41, 0x5a],
  [0x61, 0x7a],
];

/** tchar (RFC 9110 §5.6.2): methods, header names, transfer codings. */
export const TCHAR = table(...ALNUM, "!#$%&'*+-.^_`|~");

/**
 * What a request target may hold: RFC 3986's pchar, '/', '?' and '%', plus
 * `|{}^[]` and the backquote, which browsers and fetch() leave unescaped in
 * queries. Never a space, a control, '#', '"', '<', '>', '\' or a byte >= 0x80.
 */
export const TARGET_BYTE = table(...ALNUM, "-._~!$&'()*+,;=:@/?%|{}^[]`");

/** uri-host [":" port] (RFC 3986 reg-name, IPv4, IP-literal). */
export const HOST_BYTE = table(...ALNUM, "-._~!$&'()*+,;=%:[]");
