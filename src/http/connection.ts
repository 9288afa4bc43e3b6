import type { Socket } from 'node:net';
import { errorEnvelope, ServiceError } from '../errors.js';
import type { ExchangeConnection } from './exchange.js';
import type { RequestHead } from './parser/parsed-head.js';
import { SERVED_METHODS } from './parser/request-line.js';
import { RequestParser, type ParserLimits, type RequestSink } from './parser/request-parser.js';
import { readProxyHeader } from './proxy-protocol.js';
import { requestIdOf } from './request-id.js';
import { statusLine } from './status-line.js';

/** How long each stage of a client's request may take (config `server.*`; docs in config/default.yaml). */
export interface ConnectionTimings {
  /** A coarse clock (ms), read on every chunk: the server's, not Date.now(); up to a sweep (1 s) behind. */
  now(): number;
  /**
   * The exact time (ms), which also brings the coarse clock up to it: what a
   * deadline or an idle period starts from, taken once per request (not per
   * chunk). Started from the coarse clock, a deadline could end up to a sweep
   * early: with the 1 s minimum, a head, body or idle period cut after a few ms.
   */
  stamp(): number;
  /** From a request's first byte to the end of its head. */
  headTimeoutMs: number;
  /** From the end of a request's head to the end of its body. */
  bodyTimeoutMs: number;
  /** Nothing in flight, no request begun, nothing being written: the connection is closed after this long. */
  idleTimeoutMs: number;
  /** After an answer that closes, the client's further bytes are read and dropped this long. */
  lingerMs: number;
}

/** Where complete requests go (the router), and what every connection shares. */
export interface ConnectionHost {
  limits: ParserLimits;
  timings: ConnectionTimings;
  /** Handles one request; exactly one `connection.answer` follows, now or later (unless the connection is gone first). */
  dispatch(connection: HttpConnection, head: RequestHead, body: Buffer): void;
  /** The peer is a load balancer whose PROXY header must open the connection (server.proxyProtocolFrom). */
  proxyFrom(peer: string): boolean;
}

/** Complete requests waiting behind the one in flight, past which the client is not read. */
const MAX_WAITING = 32;
const MAX_WAITING_BYTES = 256 * 1024;

const CONTINUE = Buffer.from('HTTP/1.1 100 Continue\r\n\r\n');
const ALLOW = [...SERVED_METHODS].join(', ');

/** OPTIONS *: the server's own answer (no route serves it), with the request's X-Request-Id like every answer. */
function optionsStar(head: RequestHead): string {
  return `HTTP/1.1 204 No Content\r\nallow: ${ALLOW}\r\nx-request-id: ${requestIdOf(head.headers['x-request-id'])}\r\n\r\n`;
}

/**
 * A complete HTTP response with the error envelope, closing the connection.
 * Its X-Request-Id is always made here: the request it refuses was not read
 * far enough (or not well enough) to trust an id in it.
 */
function refusal(err: ServiceError): string {
  const body = errorEnvelope(err);
  return `HTTP/1.1 ${statusLine(err.status)}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nx-request-id: ${requestIdOf(undefined)}\r\nconnection: close\r\n\r\n${body}`;
}

/** A request read from the client, waiting for its turn; or the server's own answer in its place. */
interface Pending {
  head: RequestHead | null;
  body: Buffer[];
  bodyBytes: number;
  complete: boolean;
  continueSent: boolean;
  /** Answered here, not by a route: a refusal (closes), or OPTIONS *. */
  answer: string | null;
}

/**
 * One client connection:
 *
 *   socket ─► [PROXY header, from a trusted balancer] ─► RequestParser ─► waiting requests
 *        ◄─ answers, in request order ◄─ dispatch (one at a time) ◄──────────┘
 *
 * The strict parser (src/http/parser/) decides framing; each complete request
 * is dispatched to the router on this thread, and the next only once the
 * previous one is answered, so pipelined requests are answered in order and
 * the server's own answers (refusals, 100 Continue, OPTIONS *, 408) slot in
 * where they belong. Nothing after a refused request, or after one that closes
 * the connection, is ever dispatched. Deadlines are checked by the server's
 * sweep (about once a second), not by a timer per socket.
 */
export class HttpConnection implements ExchangeConnection {
  private readonly parser: RequestParser;
  private readonly waiting: Pending[] = [];
  private waitingBytes = 0;
  /** The request a handler is working on (its answer not written yet). */
  private inFlight: { abort(): void } | null = null;
  private pumping = false;
  private clientEnded = false;
  /** The answer that ends the connection was sent (or the connection is gone): nothing more is read. */
  private closing = false;
  private finished = false;
  private paused = false;
  /** The socket's buffer is full (the client does not read): no request is dispatched until it drains. */
  private writeBlocked = false;
  private lastActive: number;
  /** When the head being read began, and when the body being read began (0: not reading one). */
  private headSince = 0;
  private bodySince = 0;
  /** Bytes gathered while waiting for a trusted balancer's PROXY header (null once it is read, or not expected). */
  private proxyBytes: Buffer | null;
  remoteAddress: string;

  private readonly socket: Socket;
  private readonly host: ConnectionHost;
  private readonly onFinished: (connection: HttpConnection) => void;
  constructor(
    socket: Socket,
    host: ConnectionHost,
    onFinished: (connection: HttpConnection) => void,
  ) {
    this.socket = socket;
    this.host = host;
    this.onFinished = onFinished;
    const timings = host.timings;
    this.lastActive = timings.now();
    this.remoteAddress = plainAddress(socket.remoteAddress ?? '');
    this.proxyBytes = host.proxyFrom(this.remoteAddress) ? Buffer.alloc(0) : null;
    if (this.proxyBytes !== null) this.headSince = this.lastActive;
    this.parser = new RequestParser(host.limits, this.requestSink());
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('end', () => this.onEnd());
    socket.on('drain', () => {
      this.writeBlocked = false;
      this.lastActive = this.host.timings.stamp();
      this.pump();
    });
    socket.on('error', () => this.destroy());
    socket.on('close', () => this.destroy());
  }

  /** Not yet ending: a drain waits for these. */
  get open(): boolean {
    return !this.closing && !this.finished;
  }

  /**
   * The server's sweep, about once a second: a head or body past its deadline
   * is answered 408 and the connection closed; an idle connection is closed;
   * a client that reads none of its answers for the idle timeout is cut off.
   */
  sweep(now: number): void {
    if (this.finished) return;
    const { headTimeoutMs, bodyTimeoutMs, idleTimeoutMs } = this.host.timings;
    if (this.writeBlocked) {
      if (now - this.lastActive >= idleTimeoutMs) this.destroy();
      return;
    }
    if (this.closing) return;
    // Paused, the client is waiting on us, not we on it: no deadline runs.
    if (this.paused) return;
    if (this.headSince !== 0 && now - this.headSince >= headTimeoutMs) {
      this.timeOut(`The request head did not arrive within ${headTimeoutMs} ms.`);
    } else if (this.bodySince !== 0 && now - this.bodySince >= bodyTimeoutMs) {
      this.timeOut(`The request body did not arrive within ${bodyTimeoutMs} ms.`);
    } else if (this.quiet && now - this.lastActive >= idleTimeoutMs) {
      this.endGracefully();
    }
  }

  /**
   * A drain's sweep: ends the connection once it has sat `idleMs` between
   * requests. A busy one is not touched: its next answer carries
   * `connection: close` (the node is closing) and ends it.
   */
  closeIfIdle(now: number, idleMs: number, notBefore = 0): void {
    if (!this.finished && !this.closing && this.quiet && now - Math.max(this.lastActive, notBefore) >= idleMs) this.endGracefully();
  }

  /** Nothing in flight, waiting, being read or being written. */
  private get quiet(): boolean {
    return this.inFlight === null && this.waiting.length === 0 && this.headSince === 0 && this.bodySince === 0 && !this.writeBlocked;
  }

  /** The handler's answer to the request in flight (src/http/exchange.ts). */
  answer(head: string, body: string | Buffer | null, close: boolean): void {
    if (this.finished) return;
    this.inFlight = null;
    // Exact: the idle timeout counts from here (timings.stamp()).
    this.lastActive = this.host.timings.stamp();
    let flushed: boolean;
    if (body === null) flushed = this.socket.write(head, 'latin1');
    else if (typeof body === 'string') flushed = this.socket.write(head + body);
    else {
      this.socket.cork();
      this.socket.write(head, 'latin1');
      flushed = this.socket.write(body);
      this.socket.uncork();
    }
    if (!flushed) this.writeBlocked = true;
    if (close) this.endGracefully();
    else if (!this.pumping) this.pump();
  }

  private requestSink(): RequestSink {
    const last = () => this.waiting[this.waiting.length - 1]!;
    return {
      head: (head) => {
        this.headSince = 0;
        this.bodySince = this.host.timings.stamp();
        this.waiting.push({ head, body: [], bodyBytes: 0, complete: false, continueSent: false, answer: head.target === '*' ? optionsStar(head) : null });
      },
      body: (data) => {
        const pending = last();
        pending.body.push(data);
        pending.bodyBytes += data.length;
        this.waitingBytes += data.length;
      },
      end: () => {
        this.bodySince = 0;
        last().complete = true;
      },
      error: (err) => {
        this.headSince = 0;
        this.bodySince = 0;
        // A request cut short by the refusal is never dispatched: the refusal takes its place.
        if (this.waiting.length > 0 && !last().complete) this.waitingBytes -= this.waiting.pop()!.bodyBytes;
        this.waiting.push({ head: null, body: [], bodyBytes: 0, complete: true, continueSent: false, answer: refusal(err) });
      },
    };
  }

  private onData(chunk: Buffer): void {
    if (this.closing || this.finished) return; // lingering: read and drop
    const now = this.host.timings.now();
    this.lastActive = now;
    if (this.proxyBytes !== null) {
      const rest = this.readProxy(chunk);
      if (rest === null) return;
      chunk = rest;
    }
    this.parser.push(chunk);
    // A request's first byte: its head deadline starts now, exactly (timings.stamp()).
    if (this.headSince === 0 && this.parser.phase === 'head') this.headSince = this.host.timings.stamp();
    this.pump();
  }

  /** Gathers the PROXY header; returns the bytes after it once it is whole, null while waiting (or refused). */
  private readProxy(chunk: Buffer): Buffer | null {
    const gathered = this.proxyBytes!.length === 0 ? chunk : Buffer.concat([this.proxyBytes!, chunk]);
    const header = readProxyHeader(gathered);
    if (header.kind === 'more') {
      this.proxyBytes = gathered;
      return null;
    }
    this.proxyBytes = null;
    this.headSince = 0;
    if (header.kind === 'invalid') {
      this.respondAndClose(refusal(new ServiceError('bad_request', header.reason)));
      return null;
    }
    if (header.address !== null) this.remoteAddress = plainAddress(header.address);
    return gathered.subarray(header.length);
  }

  private onEnd(): void {
    this.clientEnded = true;
    if (this.closing) {
      this.destroy();
      return;
    }
    if (this.proxyBytes !== null) {
      this.destroy();
      return;
    }
    this.parser.finish();
    this.pump();
  }

  /** A request that stopped arriving: 408 after what is in flight, then the connection closes. */
  private timeOut(message: string): void {
    this.parser.abort(new ServiceError('request_timeout', message));
    if (this.proxyBytes !== null) {
      this.proxyBytes = null;
      this.respondAndClose(refusal(new ServiceError('request_timeout', message)));
      return;
    }
    this.pump();
  }

  /** Writes what can be written now, in order; dispatches the next complete request when none is in flight. */
  private pump(): void {
    if (this.pumping) return;
    this.pumping = true;
    try {
      while (!this.closing && this.inFlight === null && !this.writeBlocked && this.waiting.length > 0) {
        const next = this.waiting[0]!;
        if (!next.complete) {
          const head = next.head!;
          if (head.expectContinue && !next.continueSent && (head.chunked || head.contentLength > 0)) {
            next.continueSent = true;
            this.socket.write(CONTINUE);
          }
          break;
        }
        this.waiting.shift();
        this.waitingBytes -= next.bodyBytes;
        if (next.answer !== null) {
          if (next.head === null) {
            this.respondAndClose(next.answer);
            return;
          }
          if (!this.socket.write(next.answer, 'latin1')) this.writeBlocked = true;
          if (next.head.close) {
            this.endGracefully();
            return;
          }
          continue;
        }
        this.dispatch(next);
      }
    } finally {
      this.pumping = false;
    }
    if (this.closing) return;
    if (this.inFlight === null && this.waiting.length === 0 && (this.clientEnded || this.parser.stopped)) {
      this.endGracefully();
      return;
    }
    // Only while we hold things up (a request in flight, a client not reading): the request
    // being read is bounded by its body limit, and must be read whole to be dispatched.
    const backlog = (this.inFlight !== null || this.writeBlocked) && (this.waiting.length > MAX_WAITING || this.waitingBytes > MAX_WAITING_BYTES);
    if (backlog && !this.paused) {
      this.paused = true;
      this.socket.pause();
    } else if (!backlog && this.paused) {
      this.paused = false;
      this.socket.resume();
      // The deadlines of what was being read start again: the wait was ours.
      const now = this.host.timings.stamp();
      if (this.headSince !== 0) this.headSince = now;
      if (this.bodySince !== 0) this.bodySince = now;
    }
  }

  private dispatch(pending: Pending): void {
    const body = pending.body.length === 0 ? EMPTY : pending.body.length === 1 ? pending.body[0]! : Buffer.concat(pending.body, pending.bodyBytes);
    // Set before the handler runs: a synchronous answer clears it.
    this.inFlight = IN_FLIGHT;
    this.host.dispatch(this, pending.head!, body);
  }

  /** Called by the router with the exchange it made: aborted if the client goes away before the answer. */
  track(exchange: { abort(): void }): void {
    if (this.inFlight === IN_FLIGHT) this.inFlight = exchange;
  }

  /** The server's own answer that ends the connection, then a lingering close. */
  private respondAndClose(answer: string): void {
    this.socket.write(answer, 'latin1');
    this.endGracefully();
  }

  /**
   * FIN after what was written, then keep reading (and dropping) what the
   * client still sends for a while: closing with its bytes unread would reset
   * the connection, and a reset can destroy the answer before the client reads it.
   */
  private endGracefully(): void {
    if (this.closing || this.finished) return;
    this.closing = true;
    this.waiting.length = 0;
    this.headSince = this.bodySince = 0;
    if (this.paused) this.socket.resume();
    this.socket.end();
    if (this.clientEnded) {
      this.socket.once('finish', () => this.destroy());
      return;
    }
    setTimeout(() => this.destroy(), this.host.timings.lingerMs).unref();
  }

  destroy(): void {
    if (this.finished) return;
    this.finished = true;
    this.closing = true;
    this.socket.destroy();
    this.inFlight?.abort();
    this.inFlight = null;
    this.onFinished(this);
  }
}

const EMPTY = Buffer.alloc(0);
/** Stands for the exchange between dispatch and the router's track() call. */
const IN_FLIGHT = { abort(): void {} };

/** `::ffff:10.0.0.1` (an IPv4 client on a dual-stack socket) as `10.0.0.1`, as allowlists and logs read it. */
function plainAddress(address: string): string {
  return address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address;
}
