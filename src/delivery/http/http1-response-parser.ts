import type { IncomingHttpHeaders } from 'node:http';

/** Largest response head (status line and headers) read before the response counts as malformed. */
export const MAX_RESPONSE_HEAD_BYTES = 65_536;
const MAX_CHUNK_LINE = 4_096;

export interface ParsedResponse {
  status: number;
  headers: IncomingHttpHeaders;
  /** At most `maxBodyBytes` of the body. */
  body: Buffer;
  /** The body was longer than `maxBodyBytes`: the rest was not read. */
  truncated: boolean;
  /** The connection may carry another request: HTTP/1.1, no `connection: close`, framed body read whole, nothing after it. */
  reusable: boolean;
}

/** What one `push` came to: nothing yet, the response, or a malformed one. */
export type ParseStep = { kind: 'more' } | { kind: 'done'; response: ParsedResponse } | { kind: 'error'; message: string };

type Framing = { kind: 'length'; remaining: number } | { kind: 'chunked' } | { kind: 'close' };
type ChunkState = 'size' | 'data' | 'data-end' | 'trailers';

const STATUS_LINE = /^HTTP\/1\.([01]) (\d{3})(?: [^\r\n]*)?$/;
const MORE: ParseStep = { kind: 'more' };

/**
 * Reads one HTTP/1.1 response off a connection's bytes, as they arrive
 * (RFC 9112): skips interim 1xx heads, then frames the body by
 * Content-Length, chunked encoding, or the connection's end. Only what a
 * delivery needs is kept: the status, the headers (lower-case names, repeats
 * joined with ", ", set-cookie as a list, as node:http gives them) and the
 * first `maxBodyBytes` of the body.
 */
export class Http1ResponseParser {
  /** The start of a head whose end has not arrived yet. */
  private partialHead: Buffer | null = null;
  private status = 0;
  private minor = 1;
  private headers: IncomingHttpHeaders = {};
  private framing: Framing | null = null;
  private chunk: ChunkState = 'size';
  private chunkRemaining = 0;
  private line: Buffer[] = [];
  private lineBytes = 0;
  private body: Buffer[] = [];
  private bodyBytes = 0;

  private readonly maxBodyBytes: number;
  constructor(maxBodyBytes: number) {
    this.maxBodyBytes = maxBodyBytes;
  }

  /** Feeds bytes; `done` once the response is complete (or long enough), `error` if it is malformed. */
  push(data: Buffer): ParseStep {
    let at = 0;
    while (at < data.length) {
      if (this.framing === null) {
        const step = this.readHead(data, at);
        if (typeof step !== 'number') return step;
        at = step;
        continue;
      }
      const step = this.readBody(data, at);
      if (typeof step !== 'number') return step;
      at = step;
    }
    return this.framing !== null && this.complete() ? this.done(at === data.length) : MORE;
  }

  /** The connection ended: a close-delimited body is complete; anything else cut short is an error. */
  end(): ParseStep {
    if (this.framing?.kind === 'close') return this.done(true, false);
    return { kind: 'error', message: 'connection closed before the response ended' };
  }

  /** A Content-Length body read whole (or none at all) when the bytes ran out. Chunked bodies end in readChunked. */
  private complete(): boolean {
    const f = this.framing!;
    return f.kind === 'length' && f.remaining === 0;
  }

  private done(nothingAfter: boolean, truncated = false): ParseStep {
    const connection = this.headers.connection;
    const close = typeof connection === 'string' && /(?:^|,)\s*close\s*(?:,|$)/i.test(connection);
    const reusable = !truncated && nothingAfter && this.minor === 1 && !close && this.framing!.kind !== 'close';
    const body = this.body.length === 1 ? this.body[0]! : Buffer.concat(this.body, Math.min(this.bodyBytes, this.maxBodyBytes));
    return { kind: 'done', response: { status: this.status, headers: this.headers, body, truncated, reusable } };
  }

  /** Reads head bytes up to the empty line; returns where the body starts, or a step. */
  private readHead(data: Buffer, at: number): number | ParseStep {
    const carried = this.partialHead?.length ?? 0;
    const joined = this.partialHead === null ? data.subarray(at) : Buffer.concat([this.partialHead, data.subarray(at)]);
    const end = joined.indexOf('\r\n\r\n');
    if (end === -1) {
      if (joined.length > MAX_RESPONSE_HEAD_BYTES) return { kind: 'error', message: `response head over ${MAX_RESPONSE_HEAD_BYTES} bytes` };
      this.partialHead = Buffer.from(joined);
      return data.length;
    }
    if (end > MAX_RESPONSE_HEAD_BYTES) return { kind: 'error', message: `response head over ${MAX_RESPONSE_HEAD_BYTES} bytes` };
    const consumed = end + 4 - carried; // bytes of `data` (from `at`) that belonged to this head
    this.partialHead = null;
    const problem = this.parseHead(joined.toString('latin1', 0, end));
    if (problem !== null) return { kind: 'error', message: problem };
    // An interim answer (100 Continue, 103 Early Hints): the real one follows.
    if (this.status >= 100 && this.status < 200 && this.status !== 101) {
      this.headers = {};
      return at + consumed;
    }
    const framing = this.frame();
    if (typeof framing === 'string') return { kind: 'error', message: framing };
    this.framing = framing;
    return at + consumed;
  }

  /** Status line and header fields; null when well-formed, else what is wrong. */
  private parseHead(text: string): string | null {
    const lines = text.split('\r\n');
    const status = STATUS_LINE.exec(lines[0]!);
    if (!status) return `malformed status line ${JSON.stringify(lines[0]!.slice(0, 80))}`;
    this.minor = Number(status[1]);
    this.status = Number(status[2]);
    const headers: IncomingHttpHeaders = {};
    for (let i = 1; i < lines.length; i++) {
      const line = lines[i]!;
      const colon = line.indexOf(':');
      if (colon <= 0 || /[\s\x00-\x1f\x7f]/.test(line.slice(0, colon))) return `malformed header line ${JSON.stringify(line.slice(0, 80))}`;
      const name = line.slice(0, colon).toLowerCase();
      const value = line.slice(colon + 1).trim();
      if (name === 'set-cookie') (headers['set-cookie'] ??= []).push(value);
      else {
        const previous = headers[name] as string | undefined;
        headers[name] = previous === undefined ? value : `${previous}, ${value}`;
      }
    }
    this.headers = headers;
    return null;
  }

  private frame(): Framing | string {
    if (this.status === 204 || this.status === 304 || this.status === 101) return { kind: 'length', remaining: 0 };
    const te = this.headers['transfer-encoding'] as string | undefined;
    if (te !== undefined) return /(?:^|,)\s*chunked\s*$/i.test(te) ? { kind: 'chunked' } : { kind: 'close' };
    const cl = this.headers['content-length'] as string | undefined;
    if (cl === undefined) return { kind: 'close' };
    const values = new Set(cl.split(',').map((v) => v.trim()));
    const only = values.size === 1 ? [...values][0]! : '';
    if (!/^\d{1,15}$/.test(only)) return `malformed content-length ${JSON.stringify(cl.slice(0, 40))}`;
    return { kind: 'length', remaining: Number(only) };
  }

  private keep(bytes: Buffer): void {
    const room = this.maxBodyBytes - this.bodyBytes;
    if (room > 0) this.body.push(bytes.length <= room ? Buffer.from(bytes) : Buffer.from(bytes.subarray(0, room)));
    this.bodyBytes += bytes.length;
  }

  /** Reads body bytes; returns where it stopped, or a step when done or long enough. */
  private readBody(data: Buffer, at: number): number | ParseStep {
    const f = this.framing!;
    if (f.kind === 'length') {
      if (f.remaining === 0) return this.done(at === data.length);
      const take = Math.min(f.remaining, data.length - at);
      this.keep(data.subarray(at, at + take));
      f.remaining -= take;
      if (this.bodyBytes > this.maxBodyBytes) return this.done(false, true);
      return f.remaining === 0 ? this.done(at + take === data.length) : at + take;
    }
    if (f.kind === 'close') {
      this.keep(data.subarray(at));
      if (this.bodyBytes > this.maxBodyBytes) return this.done(false, true);
      return data.length;
    }
    return this.readChunked(data, at);
  }

  private readChunked(data: Buffer, at: number): number | ParseStep {
    if (this.chunk === 'data') {
      const take = Math.min(this.chunkRemaining, data.length - at);
      this.keep(data.subarray(at, at + take));
      this.chunkRemaining -= take;
      if (this.bodyBytes > this.maxBodyBytes) return this.done(false, true);
      if (this.chunkRemaining === 0) this.chunk = 'data-end';
      return at + take;
    }
    // size line, the CRLF after a chunk's data, or a trailer line
    const lf = data.indexOf(0x0a, at);
    const stop = lf === -1 ? data.length : lf + 1;
    this.line.push(data.subarray(at, stop));
    this.lineBytes += stop - at;
    if (this.lineBytes > MAX_CHUNK_LINE) return { kind: 'error', message: 'chunk line too long' };
    if (lf === -1) return stop;
    const line = (this.line.length === 1 ? this.line[0]! : Buffer.concat(this.line)).toString('latin1');
    this.line = [];
    this.lineBytes = 0;
    if (this.chunk === 'data-end') {
      if (line !== '\r\n') return { kind: 'error', message: 'chunk data not followed by CRLF' };
      this.chunk = 'size';
      return stop;
    }
    if (this.chunk === 'trailers') {
      if (line === '\r\n') return this.done(stop === data.length);
      return stop;
    }
    const size = /^([0-9a-fA-F]{1,8})[ \t]*(?:;[^\r\n]*)?\r\n$/.exec(line);
    if (!size) return { kind: 'error', message: 'malformed chunk size line' };
    this.chunkRemaining = parseInt(size[1]!, 16);
    this.chunk = this.chunkRemaining === 0 ? 'trailers' : 'data';
    return stop;
  }
}
