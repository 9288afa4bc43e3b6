// A head the parser accepted: its fields by position in the head's bytes, and the byte tests that sort them.
import { GUARD_PREFIX } from '../guard-marks.js';
import { UWS_NAME_BYTE, UWS_VALUE_BYTE } from './byte-classes.js';

/**
 * Fields the front consumes: framing and connection management are decided
 * here, once, and never reach uWS as the client wrote them (reference §6
 * lists them as transport). Host arrives separately.
 */
const CONSUMED = ['host', 'content-length', 'transfer-encoding', 'connection', 'expect', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'upgrade'];
const CONSUMED_BY_LENGTH = new Map<number, string[]>();
for (const name of CONSUMED) CONSUMED_BY_LENGTH.set(name.length, [...(CONSUMED_BY_LENGTH.get(name.length) ?? []), name]);

/**
 * A header field line as the client sent it, by position in the head's bytes:
 * the name and value strings are only made when asked for (the common head is
 * forwarded by copying its validated lines, with no string per field).
 */
export class HeadField {
  constructor(
    readonly raw: Buffer,
    readonly start: number,
    readonly colon: number,
    readonly valueStart: number,
    readonly valueEnd: number,
    /** Where the line's CRLF starts. */
    readonly end: number,
    /** uWS 20.30 takes the name and value unchanged. */
    readonly carriable: boolean,
  ) {}

  /** Lower-case. */
  get name(): string {
    return this.raw.toString('latin1', this.start, this.colon).toLowerCase();
  }

  /** Without the optional whitespace around it. */
  get value(): Buffer {
    return this.raw.subarray(this.valueStart, this.valueEnd);
  }

}

export interface RequestHead {
  method: string;
  /** Origin-form (`/path?query`), or `*` for OPTIONS. */
  target: string;
  /** 0 for HTTP/1.0; 1 for HTTP/1.1 (and later 1.x, read as 1.1). */
  minor: 0 | 1;
  host: string;
  /** End-to-end fields in the order sent; framing, connection and mark fields left out (made when first read). */
  readonly fields: HeadField[];
  /** The head's bytes (the fields point into them). */
  raw: Buffer;
  /** The request line (CRLF included) is already canonical: a served method other than HEAD, origin-form, HTTP/1.1. */
  requestLineEnd: number;
  lineCanonical: boolean;
  /** The Host line [start, end) with its CRLF, copied as it is; null to write `host` from `host` (absolute-form, none). */
  hostLine: [number, number] | null;
  /**
   * The head is already in the canonical form as the client sent it: the
   * request line is one uWS takes as it is, every field is one uWS takes
   * unchanged, nothing is dropped, and no field but Host, Content-Length and
   * `Connection: keep-alive` is consumed. Then it goes to uWS byte for byte
   * (the Content-Length line where the client put it).
   */
  verbatim: boolean;
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

/** A head that passed every check; its fields are sliced out of `raw` when first read. */
export class ParsedHead implements RequestHead {
  private made: HeadField[] | null = null;

  constructor(
    readonly method: string,
    readonly target: string,
    readonly minor: 0 | 1,
    readonly host: string,
    readonly raw: Buffer,
    private readonly lineEnds: readonly number[],
    readonly requestLineEnd: number,
    readonly lineCanonical: boolean,
    readonly hostLine: [number, number] | null,
    readonly verbatim: boolean,
    readonly chunked: boolean,
    readonly contentLength: number,
    readonly framed: boolean,
    readonly expectContinue: boolean,
    readonly close: boolean,
  ) {}

  get fields(): HeadField[] {
    if (this.made !== null) return this.made;
    const h = this.raw;
    const fields: HeadField[] = [];
    for (let k = 1; k < this.lineEnds.length; k++) {
      const start = this.lineEnds[k - 1]! + 1;
      const end = this.lineEnds[k]! - 1;
      const colon = h.indexOf(0x3a, start);
      if (consumedName(h, start, colon) !== null || startsWithLower(h, start, colon, GUARD_PREFIX)) continue;
      let vs = colon + 1;
      let ve = end;
      while (vs < ve && (h[vs] === 0x20 || h[vs] === 0x09)) vs++;
      while (ve > vs && (h[ve - 1] === 0x20 || h[ve - 1] === 0x09)) ve--;
      fields.push(new HeadField(h, start, colon, vs, ve, end, carriable(h, start, colon, vs, ve)));
    }
    this.made = fields;
    return fields;
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

/** uWS 20.30 takes this name and value unchanged: name of `[A-Za-z0-9-]`, value of visible ASCII, SP, HTAB. */
export function carriable(h: Buffer, start: number, colon: number, vs: number, ve: number): boolean {
  for (let p = start; p < colon; p++) if (!UWS_NAME_BYTE[h[p]!]) return false;
  for (let p = vs; p < ve; p++) if (!UWS_VALUE_BYTE[h[p]!]) return false;
  return true;
}
