import { contiguous } from './contiguous.js';

/** What the framer reports: bytes for the client, and where each final response ends. */
export interface ResponseSink {
  data(bytes: Buffer): void;
  /** A final response is through; `close`: it said `connection: close`. */
  complete(close: boolean): void;
}

type State = 'head' | 'body' | 'chunk-line' | 'chunk-data' | 'trailers' | 'until-close';

const HEAD_END = Buffer.from('\r\n\r\n');
/** `Connection: close` as uWS writes it or `connection: close` as the handlers do (the first letter left out). */
const CONNECTION_CLOSE = Buffer.from('onnection: close\r\n');
const CONTENT_LENGTH = Buffer.from('\r\nContent-Length: ');
const CHUNKED = Buffer.from('\r\nTransfer-Encoding: chunked\r\n');

/** The Content-Length uWS wrote (it writes that spelling), read from the bytes; -1 when there is none. */
function contentLength(head: Buffer): number {
  let at = head.indexOf(CONTENT_LENGTH);
  if (at === -1) {
    const m = /\r\ncontent-length: *(\d+)/i.exec(head.toString('latin1'));
    return m ? Number(m[1]) : -1;
  }
  at += CONTENT_LENGTH.length;
  let n = 0;
  for (let c = head[at]!; c >= 0x30 && c <= 0x39; c = head[++at]!) n = n * 10 + (c - 0x30);
  return n;
}

/**
 * Finds where each response ends in what uWS writes back, so the front knows
 * when the exchange it forwarded is answered: only then does it forward the
 * next request (uWS 20.30 drops a connection that pipelines behind a pending
 * response), send its own refusal, or close. The bytes come from streamgate's
 * own handlers through uWS, so this reads framing only (status, Content-Length,
 * chunked) and checks nothing else. A response to a HEAD that was sent to uWS
 * as GET loses its body here.
 */
export class ResponseFramer {
  private state: State = 'head';
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private remaining = 0;
  private close = false;
  private dropBody = false;
  /** What this push passes on, sent as one write (a response is usually one chunk: one syscall, one packet). */
  private out: Buffer[] = [];

  constructor(private readonly sink: ResponseSink) {}

  /** The response in progress has no length: it ends when uWS closes. */
  get readingToClose(): boolean {
    return this.state === 'until-close';
  }

  /** The next response answers a HEAD request: pass its head, drop its body. */
  expectHead(dropBody: boolean): void {
    this.dropBody = dropBody;
  }

  push(chunk: Buffer): void {
    if (this.state === 'head' && this.pendingBytes === 0 && !this.dropBody && this.wholeResponse(chunk)) return;
    this.pass(chunk);
    this.flush();
  }

  /**
   * The usual case, one read holding exactly one whole answer with a
   * Content-Length: passed on as it is, no slicing. False (nothing done)
   * for anything else.
   */
  private wholeResponse(chunk: Buffer): boolean {
    const end = chunk.indexOf(HEAD_END);
    if (end === -1 || chunk[9] === 0x31) return false; // no whole head, or an interim 1xx
    const head = chunk.subarray(0, end + 2);
    const length = contentLength(head);
    if (length < 0 || end + 4 + length !== chunk.length) return false;
    this.sink.data(chunk);
    this.sink.complete(head.indexOf(CONNECTION_CLOSE) !== -1);
    return true;
  }

  private pass(chunk: Buffer): void {
    let at = 0;
    while (at < chunk.length) {
      switch (this.state) {
        case 'until-close':
          this.out.push(at === 0 ? chunk : chunk.subarray(at));
          return;
        case 'head':
          at = this.readHead(chunk, at);
          break;
        case 'body':
        case 'chunk-data': {
          const take = Math.min(this.remaining, chunk.length - at);
          if (!this.dropBody) this.out.push(chunk.subarray(at, at + take));
          at += take;
          this.remaining -= take;
          if (this.remaining === 0) {
            if (this.state === 'body') this.done();
            else this.state = 'chunk-line';
          }
          break;
        }
        case 'chunk-line':
        case 'trailers':
          at = this.readLine(chunk, at);
          break;
      }
    }
  }

  private done(): void {
    this.state = 'head';
    this.dropBody = false;
    this.flush();
    this.sink.complete(this.close);
  }

  /** Passes on what was gathered: one buffer when the pieces are back to back in memory (the usual case). */
  private flush(): void {
    const parts = this.out;
    if (parts.length === 0) return;
    this.out = [];
    this.sink.data(parts.length === 1 ? parts[0]! : (contiguous(parts) ?? Buffer.concat(parts)));
  }

  private readHead(chunk: Buffer, at: number): number {
    this.pending.push(at === 0 ? chunk : chunk.subarray(at));
    this.pendingBytes += chunk.length - at;
    const joined = this.pending.length === 1 ? this.pending[0]! : Buffer.concat(this.pending, this.pendingBytes);
    const end = joined.indexOf(HEAD_END);
    if (end === -1) {
      this.pending = [joined];
      return chunk.length;
    }
    const consumedBefore = this.pendingBytes - (chunk.length - at);
    this.pending = [];
    this.pendingBytes = 0;
    const headBytes = joined.subarray(0, end + 4);
    this.out.push(headBytes);
    const status = (joined[9]! - 0x30) * 100 + (joined[10]! - 0x30) * 10 + (joined[11]! - 0x30);
    // uWS writes its own fields in this case; the handlers' own fields are lower-case.
    const head = joined.subarray(0, end + 2);
    this.close = head.indexOf(CONNECTION_CLOSE) !== -1;
    const next = at + (end + 4 - consumedBefore);
    if (status >= 100 && status < 200 && status !== 101) return next; // interim: the final response follows
    const length = contentLength(head);
    if (status === 204 || status === 304 || length === 0) this.done();
    else if (length > 0) {
      this.remaining = length;
      this.state = 'body';
    } else if (head.indexOf(CHUNKED) !== -1 || /\r\ntransfer-encoding: *chunked/i.test(head.toString('latin1'))) this.state = 'chunk-line';
    else if (this.dropBody) this.done();
    else this.state = 'until-close';
    return next;
  }

  /** A chunk-size line, or a trailer line; passed on whole (unless the body is dropped). */
  private readLine(chunk: Buffer, at: number): number {
    const lf = chunk.indexOf(0x0a, at);
    const stop = lf === -1 ? chunk.length : lf + 1;
    this.pending.push(chunk.subarray(at, stop));
    this.pendingBytes += stop - at;
    if (lf === -1) return stop;
    const line = Buffer.concat(this.pending, this.pendingBytes);
    this.pending = [];
    this.pendingBytes = 0;
    if (!this.dropBody) this.out.push(line);
    if (this.state === 'trailers') {
      if (line.length <= 2) this.done();
      return stop;
    }
    const size = parseInt(line.toString('latin1'), 16);
    if (size === 0) this.state = 'trailers';
    else {
      this.remaining = size + 2; // the data and its CRLF
      this.state = 'chunk-data';
    }
    return stop;
  }
}
