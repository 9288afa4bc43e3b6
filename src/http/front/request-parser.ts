import { ServiceError } from '../../errors.js';
import { GUARD_PREFIX } from '../guard-marks.js';
import { HOST_BYTE, TARGET_BYTE, TCHAR, UWS_NAME_BYTE, UWS_VALUE_BYTE } from './byte-classes.js';

/** The methods streamgate serves; any other token is answered 501 (RFC 9110 §9.1). */
export const SERVED_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/**
 * Fields the front consumes: framing and connection management are decided
 * here, once, and never reach uWS as the client wrote them (reference §6
 * lists them as transport). Host arrives separately.
 */
const CONSUMED = ['host', 'content-length', 'transfer-encoding', 'connection', 'expect', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'upgrade'];
const CONSUMED_BY_LENGTH = new Map<number, string[]>();
for (const name of CONSUMED) CONSUMED_BY_LENGTH.set(name.length, [...(CONSUMED_BY_LENGTH.get(name.length) ?? []), name]);

/** A longer chunk-size line (extensions included) is refused. */
const MAX_CHUNK_LINE = 4096;
/** Content-Length digits beyond this are over every body limit (64 MiB at most). */
const MAX_LENGTH_DIGITS = 15;

const VERSION = /^HTTP\/(\d)\.(\d)$/;
const TOKEN = "[!#$%&'*+\\-.^_`|~0-9A-Za-z]+";
const QUOTED = '"(?:[\\t !#-\\[\\]-~\\x80-\\xff]|\\\\[\\t -~\\x80-\\xff])*"';
// chunk = chunk-size [ chunk-ext ] CRLF; chunk-ext = *( BWS ";" BWS name [ BWS "=" BWS ( token / quoted-string ) ] ) (RFC 9112 §7.1.1)
const CHUNK_LINE = new RegExp(`^([0-9A-Fa-f]+)(?:[ \\t]*;[ \\t]*${TOKEN}(?:[ \\t]*=[ \\t]*(?:${TOKEN}|${QUOTED}))?)*$`);

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

export interface ParserLimits {
  /** Request line and fields together, line ends included. */
  maxHeadBytes: number;
  /** Header fields in one head (and in the trailer section). */
  maxFields: number;
  /** Fields a head may have to go to uWS as it came (uWS's own limit, less what the front may add). */
  maxVerbatimFields: number;
  /** The body limit of a request to this origin-form target. */
  bodyLimit(target: string): number;
}

/** What the parser reports, in stream order. After `error` nothing more. */
export interface RequestSink {
  head(head: RequestHead): void;
  /** Body bytes, de-chunked; slices of the pushed chunks. */
  body(data: Buffer): void;
  /** The request is complete. */
  end(): void;
  error(err: ServiceError): void;
}

type State = 'start' | 'head' | 'fixed' | 'chunk-size' | 'chunk-data' | 'chunk-crlf' | 'trailers' | 'done' | 'dead';

const bad = (message: string) => new ServiceError('bad_request', message);
const invalid = (message: string) => new ServiceError('invalid_header', message);

/**
 * A strict HTTP/1.1 request parser (RFC 9112), incremental over a connection's
 * byte stream. It is the only parser that decides framing: what it accepts is
 * re-serialized for uWS (canonical-head.ts), so uWS's own leniencies never
 * see a client byte that could frame differently. Anything RFC 9112 lets a
 * server refuse is refused here, with the reference's code: a head that is not
 * exactly CRLF-delimited, obs-fold, a name that is not a token, missing or
 * repeated Host, a Content-Length that is not one number, Transfer-Encoding
 * beside Content-Length or not ending in `chunked`, malformed chunk lines.
 * After a refusal or a request that closes the connection, nothing more is
 * read: what follows is never parsed as a request.
 */
export class RequestParser {
  private state: State = 'start';
  /** Head (or chunk line, or trailer section) bytes gathered so far. */
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** Offsets (within the gathered bytes) of each LF of the head seen so far. */
  private lineEnds: number[] = [];
  private lastByte = -1;
  private remaining = 0;
  private bodyBytes = 0;
  private bodyLimit = 0;
  private crlfSeen = 0;
  private close = false;
  private requestLine: RequestLine | null = null;

  constructor(
    private readonly limits: ParserLimits,
    private readonly sink: RequestSink,
  ) {}

  /** Between requests with nothing buffered (leading empty lines aside). */
  get idle(): boolean {
    return (this.state === 'start' && this.pendingBytes === 0) || this.state === 'done' || this.state === 'dead';
  }

  /** No more requests will be read on this connection. */
  get stopped(): boolean {
    return this.state === 'done' || this.state === 'dead';
  }

  push(chunk: Buffer): void {
    let at = 0;
    while (at < chunk.length) {
      switch (this.state) {
        case 'done':
        case 'dead':
          return;
        case 'start':
        case 'head':
          at = this.readHead(chunk, at);
          break;
        case 'fixed':
        case 'chunk-data': {
          const take = Math.min(this.remaining, chunk.length - at);
          this.sink.body(chunk.subarray(at, at + take));
          at += take;
          this.remaining -= take;
          if (this.remaining === 0) {
            if (this.state === 'fixed') this.complete();
            else {
              this.state = 'chunk-crlf';
              this.crlfSeen = 0;
            }
          }
          break;
        }
        case 'chunk-crlf': {
          const expected = this.crlfSeen === 0 ? 0x0d : 0x0a;
          if (chunk[at] !== expected) return this.fail(bad('Chunk data is not followed by CRLF.'));
          at++;
          if (++this.crlfSeen === 2) this.state = 'chunk-size';
          break;
        }
        case 'chunk-size':
          at = this.readChunkLine(chunk, at);
          break;
        case 'trailers':
          at = this.readTrailers(chunk, at);
          break;
      }
    }
  }

  /** The client sent FIN: a request it left incomplete is answered, not waited for. */
  finish(): void {
    if (this.idle) return;
    this.fail(bad('The connection ended before the request was complete.'));
  }

  private fail(err: ServiceError): void {
    this.state = 'dead';
    this.pending = [];
    this.sink.error(err);
  }

  private complete(): void {
    this.state = this.close ? 'done' : 'start';
    this.sink.end();
  }

  private gather(chunk: Buffer, at: number, stop: number): void {
    if (stop > at) {
      this.pending.push(chunk.subarray(at, stop));
      this.pendingBytes += stop - at;
      this.lastByte = chunk[stop - 1]!;
    }
  }

  private takePending(): Buffer {
    const buf = this.pending.length === 1 ? this.pending[0]! : Buffer.concat(this.pending, this.pendingBytes);
    this.pending = [];
    this.pendingBytes = 0;
    this.lastByte = -1;
    return buf;
  }

  /** Finds the head's lines LF by LF; parses the head at its empty line. Returns where reading stopped. */
  private readHead(chunk: Buffer, at: number): number {
    let from = at;
    for (;;) {
      const lf = chunk.indexOf(0x0a, from);
      if (lf === -1) {
        this.gather(chunk, at, chunk.length);
        if (this.pendingBytes > this.limits.maxHeadBytes) this.tooLarge();
        return chunk.length;
      }
      const cr = lf > at ? chunk[lf - 1] === 0x0d : this.lastByte === 0x0d;
      const offset = this.pendingBytes + (lf - at);
      if (!cr) {
        this.fail(this.lineEnds.length === 0 ? bad('The request line does not end in CRLF.') : invalid('A header line ends in a bare LF.'));
        return chunk.length;
      }
      const lineStart = this.lineEnds.length === 0 ? 0 : this.lineEnds[this.lineEnds.length - 1]! + 1;
      const empty = offset - lineStart === 1;
      if (empty && this.lineEnds.length === 0) {
        // An empty line before the request line is ignored (RFC 9112 §2.2).
        this.gather(chunk, at, lf + 1);
        this.takePending();
        this.state = 'start';
        at = from = lf + 1;
        continue;
      }
      this.state = 'head';
      if (offset + 1 > this.limits.maxHeadBytes) {
        this.tooLarge();
        return chunk.length;
      }
      if (empty) {
        this.gather(chunk, at, lf + 1);
        const lineEnds = this.lineEnds;
        this.lineEnds = [];
        this.parseHead(this.takePending(), lineEnds);
        return lf + 1;
      }
      if (this.lineEnds.length === 0) {
        // The request line is checked as soon as it is whole: garbage is refused without waiting for a head.
        // (Usually it is all in this chunk: read in place, no copy.)
        const line = this.pendingBytes === 0 ? chunk.subarray(at, lf + 1) : Buffer.concat([...this.pending, chunk.subarray(at, lf + 1)]);
        const parsed = parseRequestLine(line, line.length - 2);
        if (typeof parsed === 'string' || parsed instanceof ServiceError) {
          this.fail(typeof parsed === 'string' ? bad(parsed) : parsed);
          return chunk.length;
        }
        this.requestLine = parsed;
      }
      this.lineEnds.push(offset);
      // Request line + fields + the empty line: more lines than that are over the count already.
      if (this.lineEnds.length > this.limits.maxFields + 1) {
        this.fail(new ServiceError('header_too_large', `The request has more than ${this.limits.maxFields} header fields.`));
        return chunk.length;
      }
      from = lf + 1;
    }
  }

  private tooLarge(): void {
    this.fail(new ServiceError('header_too_large', `The request head is over the limit of ${this.limits.maxHeadBytes} bytes.`));
  }

  private parseHead(h: Buffer, lineEnds: readonly number[]): void {
    const { method, minor, form } = this.requestLine!;
    let fieldCount = 0;
    let hosts = 0;
    let host = '';
    let hostLine: [number, number] | null = null;
    /** Lines that keep the head from going as it came (dropped, untidy, or a field uWS cannot take). */
    let untidy = 0;
    let contentLength: string | null = null;
    let lengths = 0;
    const codings: string[] = [];
    let close = minor === 0;
    let expectContinue = false;
    for (let k = 1; k < lineEnds.length; k++) {
      const start = lineEnds[k - 1]! + 1;
      const end = lineEnds[k]! - 1;
      const first = h[start]!;
      if (first === 0x20 || first === 0x09) return this.fail(invalid('A header line is folded (obs-fold).'));
      const colon = h.indexOf(0x3a, start);
      if (colon === -1 || colon >= end) return this.fail(invalid('A header line has no colon.'));
      if (colon === start) return this.fail(invalid('A header line has an empty name.'));
      for (let p = start; p < colon; p++) if (!TCHAR[h[p]!]) return this.fail(invalid('A header name holds a byte that is not allowed (whitespace before the colon included).'));
      let vs = colon + 1;
      let ve = end;
      while (vs < ve && (h[vs] === 0x20 || h[vs] === 0x09)) vs++;
      while (ve > vs && (h[ve - 1] === 0x20 || h[ve - 1] === 0x09)) ve--;
      const name = consumedName(h, start, colon);
      if (name === null) {
        // Only counted here: the HeadField objects are made if something reads them (not for a verbatim head).
        if (startsWithLower(h, start, colon, GUARD_PREFIX)) untidy++;
        else {
          fieldCount++;
          // Optional whitespace may stay: uWS trims SP and HTAB around a value as this parser does.
          if (!carriable(h, start, colon, vs, ve)) untidy++;
        }
        continue;
      }
      const value = h.toString('latin1', vs, ve);
      if (name === 'host') hostLine = [start, end + 2];
      // `Connection: keep-alive` (what most clients send) may stay too: uWS only ever looks for `close`.
      else if (name !== 'content-length' && !(name === 'connection' && value.toLowerCase() === 'keep-alive')) untidy++;
      switch (name) {
        case 'host':
          hosts++;
          host = value;
          break;
        case 'content-length':
          lengths++;
          contentLength = value;
          break;
        case 'transfer-encoding':
          codings.push(...value.split(','));
          break;
        case 'connection':
          // (`keep-alive`, what most clients send, needs no list split.)
          if (value.length !== 10 && listHas(value, 'close')) close = true;
          break;
        case 'expect':
          if (minor === 1 && listHas(value, '100-continue')) expectContinue = true;
          break;
      }
    }
    if (lineEnds.length - 1 > this.limits.maxFields) return this.fail(new ServiceError('header_too_large', `The request has more than ${this.limits.maxFields} header fields.`));
    if (hosts > 1) return this.fail(bad('The request has more than one Host field.'));
    if (hosts === 0 && minor === 1) return this.fail(bad('An HTTP/1.1 request needs a Host field.'));
    if (hosts === 1 && !validHost(host)) return this.fail(bad('The Host field is not a valid host.'));
    if (form.host !== null) {
      host = form.host;
      hostLine = null;
    }
    if (hosts === 0) hostLine = null;

    let chunked = false;
    let length = 0;
    if (codings.length > 0) {
      if (minor === 0) return this.fail(bad('Transfer-Encoding is not allowed in HTTP/1.0.'));
      if (lengths > 0) return this.fail(bad('The request has both Transfer-Encoding and Content-Length.'));
      const problem = chunkedOnly(codings);
      if (problem) return this.fail(problem);
      chunked = true;
    } else if (lengths > 1) {
      return this.fail(bad('The request has more than one Content-Length field.'));
    } else if (contentLength !== null) {
      if (!/^[0-9]+$/.test(contentLength)) return this.fail(bad('Content-Length is not a number.'));
      length = contentLength.length > MAX_LENGTH_DIGITS ? Number.MAX_SAFE_INTEGER : Number(contentLength);
    }
    this.bodyLimit = this.limits.bodyLimit(form.target);
    if (length > this.bodyLimit) return this.fail(tooLargeBody(this.bodyLimit));

    this.close = close;
    const requestLineEnd = lineEnds[0]! - 1;
    const lineCanonical = method !== 'HEAD' && form.host === null && version11(h, requestLineEnd);
    const verbatim = lineCanonical && hostLine !== null && untidy === 0 && !chunked && fieldCount + 2 <= this.limits.maxVerbatimFields;
    this.sink.head(new ParsedHead(method, form.target, minor, host, h, lineEnds, requestLineEnd, lineCanonical, hostLine, verbatim, chunked, length, chunked || contentLength !== null, expectContinue, close));
    if (this.state === 'dead') return;
    if (chunked) {
      this.bodyBytes = 0;
      this.state = 'chunk-size';
    } else if (length > 0) {
      this.remaining = length;
      this.state = 'fixed';
    } else {
      this.complete();
    }
  }

  private readChunkLine(chunk: Buffer, at: number): number {
    const lf = chunk.indexOf(0x0a, at);
    const stop = lf === -1 ? chunk.length : lf + 1;
    this.gather(chunk, at, stop);
    if (this.pendingBytes > MAX_CHUNK_LINE) {
      this.fail(bad('A chunk-size line is too long.'));
      return chunk.length;
    }
    if (lf === -1) return stop;
    const line = this.takePending();
    if (line.length < 2 || line[line.length - 2] !== 0x0d) {
      this.fail(bad('A chunk-size line does not end in CRLF.'));
      return chunk.length;
    }
    const match = CHUNK_LINE.exec(line.toString('latin1', 0, line.length - 2));
    if (!match) {
      this.fail(bad('A chunk-size line is malformed.'));
      return chunk.length;
    }
    const digits = match[1]!.replace(/^0+(?=.)/, '');
    const size = digits.length > 12 ? Number.MAX_SAFE_INTEGER : parseInt(digits, 16);
    this.bodyBytes += size;
    if (this.bodyBytes > this.bodyLimit) {
      this.fail(tooLargeBody(this.bodyLimit));
      return chunk.length;
    }
    if (size === 0) {
      this.state = 'trailers';
      this.lineEnds = [];
    } else {
      this.remaining = size;
      this.state = 'chunk-data';
    }
    return stop;
  }

  /** The trailer section is read as strictly as a head, then dropped: trailers never reach uWS. */
  private readTrailers(chunk: Buffer, at: number): number {
    let from = at;
    for (;;) {
      const lf = chunk.indexOf(0x0a, from);
      if (lf === -1) {
        this.gather(chunk, at, chunk.length);
        if (this.pendingBytes > this.limits.maxHeadBytes) this.tooLarge();
        return chunk.length;
      }
      const cr = lf > at ? chunk[lf - 1] === 0x0d : this.lastByte === 0x0d;
      if (!cr) {
        this.fail(bad('A trailer line ends in a bare LF.'));
        return chunk.length;
      }
      const offset = this.pendingBytes + (lf - at);
      const lineStart = this.lineEnds.length === 0 ? 0 : this.lineEnds[this.lineEnds.length - 1]! + 1;
      if (offset + 1 > this.limits.maxHeadBytes) {
        this.tooLarge();
        return chunk.length;
      }
      if (offset - lineStart === 1) {
        this.gather(chunk, at, lf + 1);
        const section = this.takePending();
        const lineEnds = this.lineEnds;
        this.lineEnds = [];
        const problem = trailerProblem(section, lineEnds, this.limits.maxFields);
        if (problem) {
          this.fail(bad(problem));
          return chunk.length;
        }
        this.complete();
        return lf + 1;
      }
      this.lineEnds.push(offset);
      from = lf + 1;
    }
  }
}

/** A head that passed every check; its fields are sliced out of `raw` when first read. */
class ParsedHead implements RequestHead {
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

interface RequestLine {
  method: string;
  minor: 0 | 1;
  form: { target: string; host: string | null };
}

/** `METHOD SP target SP HTTP/1.x` (RFC 9112 §3); `end` is where its CRLF starts. Returns the refusal otherwise. */
function parseRequestLine(h: Buffer, end: number): RequestLine | ServiceError | string {
  for (let p = 0; p < end; p++) {
    const c = h[p]!;
    if (c <= 0x20 ? c !== 0x20 : c >= 0x7f) return 'The request line holds control characters or bytes that are not ASCII.';
  }
  const sp1 = h.indexOf(0x20);
  const sp2 = sp1 === -1 ? -1 : h.indexOf(0x20, sp1 + 1);
  if (sp1 <= 0 || sp2 === -1 || sp2 >= end || sp2 === sp1 + 1) return 'The request line is not `METHOD target HTTP/1.1`.';
  const version = VERSION.exec(h.toString('latin1', sp2 + 1, end));
  if (!version) return 'The request line is not `METHOD target HTTP/1.1`.';
  if (version[1] !== '1') return new ServiceError('http_version_not_supported', `HTTP/${version[1]}.${version[2]} is not served; use HTTP/1.1.`);
  for (let p = 0; p < sp1; p++) if (!TCHAR[h[p]!]) return 'The method is not a token.';
  const method = h.toString('latin1', 0, sp1);
  if (!SERVED_METHODS.has(method)) return new ServiceError('not_implemented', `The method ${method} is not implemented.`);
  for (let p = sp1 + 1; p < sp2; p++) if (!TARGET_BYTE[h[p]!]) return 'The request target holds a byte a URI cannot.';
  const form = requestTarget(h.toString('latin1', sp1 + 1, sp2), method);
  if (typeof form === 'string') return form;
  return { method, minor: version[2] === '0' ? 0 : 1, form };
}

function tooLargeBody(limit: number): ServiceError {
  return new ServiceError('payload_too_large', `The body is over the limit of ${limit} bytes.`);
}

/** Each trailer line must be a field line; returns what is wrong, or null. */
function trailerProblem(section: Buffer, lineEnds: readonly number[], maxFields: number): string | null {
  if (lineEnds.length > maxFields) return `The trailer section has more than ${maxFields} fields.`;
  let start = 0;
  for (const lf of lineEnds) {
    const end = lf - 1;
    const colon = section.indexOf(0x3a, start);
    if (colon <= start || colon >= end) return 'A trailer line is not a header field.';
    for (let p = start; p < colon; p++) if (!TCHAR[section[p]!]) return 'A trailer field name holds a byte that is not allowed.';
    start = lf + 1;
  }
  return null;
}

/** Transfer-Encoding must be exactly `chunked` (RFC 9112 §6.1, §6.3); returns the refusal otherwise. */
function chunkedOnly(values: readonly string[]): ServiceError | null {
  const codings = values.map((v) => trimOws(v).toLowerCase()).filter((v) => v !== '');
  if (codings.length === 0) return bad('Transfer-Encoding names no coding.');
  const tokenOnly = new RegExp(`^${TOKEN}$`);
  if (!codings.every((c) => tokenOnly.test(c))) return bad('Transfer-Encoding is malformed (codings take no parameters here).');
  if (codings[codings.length - 1] !== 'chunked') return bad('The final transfer coding is not chunked: the body length cannot be determined.');
  if (codings.filter((c) => c === 'chunked').length > 1) return bad('chunked is applied more than once.');
  if (codings.length > 1) return new ServiceError('not_implemented', `The transfer coding ${codings[0]} is not implemented; send the body with chunked only.`);
  return null;
}

/** Without optional whitespace (SP, HTAB) at either end; String#trim would also take VT, FF, NBSP… */
function trimOws(text: string): string {
  return text.replace(/^[ \t]+|[ \t]+$/g, '');
}

/** The request line ends in exactly `HTTP/1.1`. */
function version11(h: Buffer, end: number): boolean {
  return h.toString('latin1', end - 8, end) === 'HTTP/1.1';
}

/** The consumed field this name is (lower-case), or null; compared byte by byte, no string made for other names. */
function consumedName(h: Buffer, start: number, end: number): string | null {
  const candidates = CONSUMED_BY_LENGTH.get(end - start);
  if (candidates === undefined) return null;
  for (const name of candidates) if (startsWithLower(h, start, end, name)) return name;
  return null;
}

/** The bytes at [start, end) begin with `lower` (ASCII, case-insensitive). */
function startsWithLower(buf: Buffer, start: number, end: number, lower: string): boolean {
  if (end - start < lower.length) return false;
  for (let i = 0; i < lower.length; i++) if ((buf[start + i]! | 0x20) !== lower.charCodeAt(i)) return false;
  return true;
}

/** uWS 20.30 takes this name and value unchanged: name of `[A-Za-z0-9-]`, value of visible ASCII, SP, HTAB. */
function carriable(h: Buffer, start: number, colon: number, vs: number, ve: number): boolean {
  for (let p = start; p < colon; p++) if (!UWS_NAME_BYTE[h[p]!]) return false;
  for (let p = vs; p < ve; p++) if (!UWS_VALUE_BYTE[h[p]!]) return false;
  return true;
}

/** True when a comma-separated list holds the token (case-insensitive). */
function listHas(value: string, token: string): boolean {
  return value.split(',').some((part) => trimOws(part).toLowerCase() === token);
}

/** uri-host [ ":" port ]: reg-name, IPv4 or an IP literal in brackets. */
function validHost(value: string): boolean {
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
