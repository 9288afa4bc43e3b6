// A head the parser accepted: what the exchange reads, with the fields sliced out of the head's bytes on first use.
import { fieldName, utf8 } from './head-text.js';

/**
 * Fields the parser consumes: framing and connection management are decided
 * once, here, and handlers never see them as the client wrote them
 * (Content-Length is given back as the length of the body that was read).
 * Host arrives separately.
 */
const CONSUMED = ['host', 'content-length', 'transfer-encoding', 'connection', 'expect', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'upgrade'];
const CONSUMED_BY_LENGTH = new Map<number, string[]>();
for (const name of CONSUMED) CONSUMED_BY_LENGTH.set(name.length, [...(CONSUMED_BY_LENGTH.get(name.length) ?? []), name]);

export interface RequestHead {
  method: string;
  /** Origin-form (`/path?query`), or `*` for OPTIONS. */
  target: string;
  /** 0 for HTTP/1.0; 1 for HTTP/1.1 (and later 1.x, read as 1.1). */
  minor: 0 | 1;
  host: string;
  /**
   * End-to-end fields by lower-case name, repeats joined with ", " (RFC 9110
   * §5.3); framing and connection fields left out. Values are decoded as
   * UTF-8 (bytes that are not become U+FFFD, which the ingress checks refuse).
   */
  readonly headers: Record<string, string>;
  chunked: boolean;
  /** Body length by Content-Length (0 when chunked; the body's length is known at its end). */
  contentLength: number;
  /** The client framed a body (Content-Length or chunked), even an empty one. */
  framed: boolean;
  /** `Expect: 100-continue` on HTTP/1.1. */
  expectContinue: boolean;
  /** The connection ends after this exchange: HTTP/1.0, or `Connection: close`. */
  close: boolean;
}

/** A head that passed every check; its header record is made when first read. */
export class ParsedHead implements RequestHead {
  private made: Record<string, string> | null = null;

  readonly method: string;
  readonly target: string;
  readonly minor: 0 | 1;
  readonly host: string;
  private readonly raw: Buffer;
  private readonly lineEnds: readonly number[];
  readonly chunked: boolean;
  readonly contentLength: number;
  readonly framed: boolean;
  readonly expectContinue: boolean;
  readonly close: boolean;
  constructor(
    method: string,
    target: string,
    minor: 0 | 1,
    host: string,
    raw: Buffer,
    lineEnds: readonly number[],
    chunked: boolean,
    contentLength: number,
    framed: boolean,
    expectContinue: boolean,
    close: boolean,
  ) {
    this.method = method;
    this.target = target;
    this.minor = minor;
    this.host = host;
    this.raw = raw;
    this.lineEnds = lineEnds;
    this.chunked = chunked;
    this.contentLength = contentLength;
    this.framed = framed;
    this.expectContinue = expectContinue;
    this.close = close;
  }

  get headers(): Record<string, string> {
    if (this.made !== null) return this.made;
    const h = this.raw;
    // No prototype: a field named `constructor` or `__proto__` is a field like any other.
    const headers = Object.create(null) as Record<string, string>;
    for (let k = 1; k < this.lineEnds.length; k++) {
      const start = this.lineEnds[k - 1]! + 1;
      const end = this.lineEnds[k]! - 1;
      const colon = h.indexOf(0x3a, start);
      if (consumedName(h, start, colon) !== null) continue;
      let vs = colon + 1;
      let ve = end;
      while (vs < ve && (h[vs] === 0x20 || h[vs] === 0x09)) vs++;
      while (ve > vs && (h[ve - 1] === 0x20 || h[ve - 1] === 0x09)) ve--;
      const name = fieldName(h, start, colon);
      const value = utf8(h, vs, ve);
      const before = headers[name];
      headers[name] = before === undefined ? value : `${before}, ${value}`;
    }
    this.made = headers;
    return headers;
  }
}

/** The consumed field this name is (lower-case), or null; compared byte by byte, no string made for other names. */
export function consumedName(h: Buffer, start: number, end: number): string | null {
  const candidates = CONSUMED_BY_LENGTH.get(end - start);
  if (candidates === undefined) return null;
  for (const name of candidates) if (startsWithLower(h, start, end, name)) return name;
  return null;
}

/** The bytes at [start, end) begin with `lower` (ASCII, case-insensitive). */
export function startsWithLower(buf: Buffer, start: number, end: number, lower: string): boolean {
  if (end - start < lower.length) return false;
  for (let i = 0; i < lower.length; i++) if ((buf[start + i]! | 0x20) !== lower.charCodeAt(i)) return false;
  return true;
}
