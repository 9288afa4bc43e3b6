// The request line (RFC 9112 §3): method, target form, version; and the Host value shared with the fields.
import { ServiceError } from '../../errors.js';
import { HOST_BYTE, TARGET_BYTE, TCHAR } from './byte-classes.js';
import { latin1 } from './head-text.js';

/** The methods streamgate serves; any other token is answered 501 (RFC 9110 §9.1). */
export const SERVED_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

const METHODS = [...SERVED_METHODS];

/** The method token of [0, end): a served method as its constant string, anything else as read. */
function methodName(h: Buffer, end: number): string {
  for (const method of METHODS) if (method.length === end && startsWith(h, 0, method)) return method;
  return latin1(h, 0, end);
}

function startsWith(h: Buffer, at: number, text: string): boolean {
  for (let i = 0; i < text.length; i++) if (h[at + i] !== text.charCodeAt(i)) return false;
  return true;
}

function isDigit(byte: number): boolean {
  return byte >= 0x30 && byte <= 0x39;
}

export interface RequestLine {
  method: string;
  minor: 0 | 1;
  form: { target: string; host: string | null };
}

/** `METHOD SP target SP HTTP/1.x` (RFC 9112 §3); `end` is where its CRLF starts. Returns the refusal otherwise. */
export function parseRequestLine(h: Buffer, end: number): RequestLine | ServiceError | string {
  for (let p = 0; p < end; p++) {
    const c = h[p]!;
    if (c <= 0x20 ? c !== 0x20 : c >= 0x7f) return 'The request line holds control characters or bytes that are not ASCII.';
  }
  const sp1 = h.indexOf(0x20);
  const sp2 = sp1 === -1 ? -1 : h.indexOf(0x20, sp1 + 1);
  if (sp1 <= 0 || sp2 === -1 || sp2 >= end || sp2 === sp1 + 1) return 'The request line is not `METHOD target HTTP/1.1`.';
  // HTTP/d.d, read byte by byte (no string, no regular expression, per request).
  const v = sp2 + 1;
  if (end - v !== 8 || !startsWith(h, v, 'HTTP/') || !isDigit(h[v + 5]!) || h[v + 6] !== 0x2e || !isDigit(h[v + 7]!)) {
    return 'The request line is not `METHOD target HTTP/1.1`.';
  }
  const major = h[v + 5]! - 0x30;
  const minor = h[v + 7]! - 0x30;
  if (major !== 1) return new ServiceError('http_version_not_supported', `HTTP/${major}.${minor} is not served; use HTTP/1.1.`);
  for (let p = 0; p < sp1; p++) if (!TCHAR[h[p]!]) return 'The method is not a token.';
  const method = methodName(h, sp1);
  if (!SERVED_METHODS.has(method)) return new ServiceError('not_implemented', `The method ${method} is not implemented.`);
  for (let p = sp1 + 1; p < sp2; p++) if (!TARGET_BYTE[h[p]!]) return 'The request target holds a byte a URI cannot.';
  const form = requestTarget(latin1(h, sp1 + 1, sp2), method);
  if (typeof form === 'string') return form;
  return { method, minor: minor === 0 ? 0 : 1, form };
}

/** uri-host [ ":" port ]: reg-name, IPv4 or an IP literal in brackets. */
export function validHost(value: string): boolean {
  for (let i = 0; i < value.length; i++) if (!HOST_BYTE[value.charCodeAt(i)]) return false;
  return /^(?:\[[0-9A-Fa-f:.vV]+\]|[^:[\]]*)(?::[0-9]*)?$/.test(value);
}

/**
 * The request target's form (RFC 9112 §3.2): origin-form, absolute-form (its
 * authority becomes the Host) or asterisk-form for OPTIONS. Returns why it
 * cannot be served otherwise.
 */
function requestTarget(raw: string, method: string): { target: string; host: string | null } | string {
  if (raw.charCodeAt(0) === 0x2f) return { target: raw, host: null };
  if (raw === '*') return method === 'OPTIONS' ? { target: '*', host: null } : 'The asterisk form is only for OPTIONS.';
  const absolute = /^https?:\/\/([^/?]*)(.*)$/i.exec(raw);
  if (!absolute) return 'The request target is not a path (origin-form) or an http(s) URI.';
  const authority = absolute[1]!;
  if (authority === '' || !validHost(authority)) return 'The request target names no valid host.';
  const rest = absolute[2]!;
  return { target: rest === '' ? '/' : rest.startsWith('?') ? `/${rest}` : rest, host: authority };
}
