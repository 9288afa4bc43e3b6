import { ServiceError } from '../../errors.js';
import { TCHAR } from './byte-classes.js';
import { latin1 } from './head-text.js';
import { consumedName, ParsedHead, type RequestHead } from './parsed-head.js';
import { parseRequestLine, validHost, type RequestLine } from './request-line.js';

/** A longer chunk-size line (extensions included) is refused. */
const MAX_CHUNK_LINE = 4096;
/** Content-Length digits beyond this are over every body limit (64 MiB at most). */
const MAX_LENGTH_DIGITS = 15;

const TOKEN = "[!#$%&'*+\\-.^_`|~0-9A-Za-z]+";
const QUOTED = '"(?:[\\t !#-\\[\\]-~\\x80-\\xff]|\\\\[\\t -~\\x80-\\xff])*"';
// chunk = chunk-size [ chunk-ext ] CRLF; chunk-ext = *( BWS ";" BWS name [ BWS "=" BWS ( token / quoted-string ) ] ) (RFC 9112 §7.1.1)
const CHUNK_LINE = new RegExp(`^([0-9A-Fa-f]+)(?:[ \\t]*;[ \\t]*${TOKEN}(?:[ \\t]*=[ \\t]*(?:${TOKEN}|${QUOTED}))?)*$`);

export interface ParserLimits {
  /** Request line and fields together, line ends included. */
  maxHeadBytes: number;
  /** Header fields in one head (and in the trailer section). */
  maxFields: number;
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
 * byte stream. It is the only parser of the service's requests, so framing is
 * decided once: there is no second reading that could frame the same bytes
 * differently (request smuggling). Anything RFC 9112 lets a
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

  private readonly limits: ParserLimits;
  private readonly sink: RequestSink;
  constructor(
    limits: ParserLimits,
    sink: RequestSink,
  ) {
    this.limits = limits;
    this.sink = sink;
  }

  /** Between requests with nothing buffered (leading empty lines aside). */
  get idle(): boolean {
    return (this.state === 'start' && this.pendingBytes === 0) || this.state === 'done' || this.state === 'dead';
  }

  /** Where the request being read is: what the connection's deadlines measure (src/http/deadlines.ts). */
  get phase(): 'idle' | 'head' | 'body' {
    switch (this.state) {
      case 'start':
        return this.pendingBytes === 0 ? 'idle' : 'head';
      case 'head':
        return 'head';
      case 'done':
      case 'dead':
        return 'idle';
      default:
        return 'body';
    }
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

  /** Gives up on the request being read (a deadline passed): reported as `error`, nothing more is read. */
  abort(err: ServiceError): void {
    if (this.state === 'done' || this.state === 'dead') return;
    this.fail(err);
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

  /**
   * The next line of a head or trailer section, gathered up to its LF: where
   * the LF is, its offset in the section, and whether the line is empty. A
   * number instead says where reading stopped: the chunk ended first (what
   * there was is gathered), or the section was refused (a bare LF, over the
   * head limit).
   */
  private nextLine(chunk: Buffer, at: number, from: number, section: 'head' | 'trailers'): { lf: number; offset: number; empty: boolean } | number {
    const lf = chunk.indexOf(0x0a, from);
    if (lf === -1) {
      this.gather(chunk, at, chunk.length);
      if (this.pendingBytes > this.limits.maxHeadBytes) this.tooLarge();
      return chunk.length;
    }
    const cr = lf > at ? chunk[lf - 1] === 0x0d : this.lastByte === 0x0d;
    if (!cr) {
      if (section === 'trailers') this.fail(bad('A trailer line ends in a bare LF.'));
      else this.fail(this.lineEnds.length === 0 ? bad('The request line does not end in CRLF.') : invalid('A header line ends in a bare LF.'));
      return chunk.length;
    }
    const offset = this.pendingBytes + (lf - at);
    if (offset + 1 > this.limits.maxHeadBytes) {
      this.tooLarge();
      return chunk.length;
    }
    const lineStart = this.lineEnds.length === 0 ? 0 : this.lineEnds[this.lineEnds.length - 1]! + 1;
    return { lf, offset, empty: offset - lineStart === 1 };
  }

  /** The section gathered so far, through `lf`, with the offsets of its line ends; both reset for the next one. */
  private takeSection(chunk: Buffer, at: number, lf: number): { bytes: Buffer; lineEnds: number[] } {
    this.gather(chunk, at, lf + 1);
    const lineEnds = this.lineEnds;
    this.lineEnds = [];
    return { bytes: this.takePending(), lineEnds };
  }

  /** Finds the head's lines LF by LF; parses the head at its empty line. Returns where reading stopped. */
  private readHead(chunk: Buffer, at: number): number {
    let from = at;
    for (;;) {
      const line = this.nextLine(chunk, at, from, 'head');
      if (typeof line === 'number') return line;
      const { lf, offset, empty } = line;
      if (empty && this.lineEnds.length === 0) {
        // An empty line before the request line is ignored (RFC 9112 §2.2).
        this.takeSection(chunk, at, lf);
        this.state = 'start';
        at = from = lf + 1;
        continue;
      }
      this.state = 'head';
      if (empty) {
        const { bytes, lineEnds } = this.takeSection(chunk, at, lf);
        this.parseHead(bytes, lineEnds);
        return lf + 1;
      }
      if (this.lineEnds.length === 0) {
        // The request line is checked as soon as it is whole: garbage is refused without waiting for a head.
        // (Usually it is all in this chunk: read in place, no copy.)
        const bytes = this.pendingBytes === 0 ? chunk.subarray(at, lf + 1) : Buffer.concat([...this.pending, chunk.subarray(at, lf + 1)]);
        const parsed = parseRequestLine(bytes, bytes.length - 2);
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
    let hosts = 0;
    let host = '';
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
      // Other fields are only checked here: their strings are made if a handler reads them (parsed-head.ts).
      const name = consumedName(h, start, colon);
      if (name === null) continue;
      const value = latin1(h, vs, ve);
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
    if (form.host !== null) host = form.host;

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
    this.sink.head(new ParsedHead(method, form.target, minor, host, h, lineEnds, chunked, length, chunked || contentLength !== null, expectContinue, close));
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

  /** The trailer section is read as strictly as a head, then dropped: no handler reads trailers. */
  private readTrailers(chunk: Buffer, at: number): number {
    let from = at;
    for (;;) {
      const line = this.nextLine(chunk, at, from, 'trailers');
      if (typeof line === 'number') return line;
      if (line.empty) {
        const { bytes, lineEnds } = this.takeSection(chunk, at, line.lf);
        const problem = trailerProblem(bytes, lineEnds, this.limits.maxFields);
        if (problem) {
          this.fail(bad(problem));
          return chunk.length;
        }
        this.complete();
        return line.lf + 1;
      }
      this.lineEnds.push(line.offset);
      from = line.lf + 1;
    }
  }
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

/** True when a comma-separated list holds the token (case-insensitive). */
function listHas(value: string, token: string): boolean {
  return value.split(',').some((part) => trimOws(part).toLowerCase() === token);
}
