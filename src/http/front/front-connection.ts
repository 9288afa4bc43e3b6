import type { Socket } from 'node:net';
import { errorEnvelope, ServiceError } from '../../errors.js';
import { requestIdOf } from '../request-id.js';
import { statusLine } from '../status-line.js';
import { canonicalHead } from './canonical-head.js';
import type { RequestHead } from './parsed-head.js';
import { SERVED_METHODS } from './request-line.js';
import { RequestParser, type ParserLimits, type RequestSink } from './request-parser.js';
import { ResponseFramer, type ResponseSink } from './response-framer.js';

/** A private connection to uWS and the bytes that must open it (the PROXY header). */
export interface Upstream {
  socket: Socket;
  preamble: Buffer;
}

export interface FrontTimings {
  /** A coarse clock (ms), read on every chunk: the listener's, not Date.now(). */
  now(): number;
  /** A connection with nothing in flight and no traffic for this long is closed (as uWS's own idle timeout). */
  idleMs: number;
  /** After an answer that closes, the client's further bytes are read and dropped this long. */
  lingerMs: number;
}

/** Complete requests waiting behind the one in flight, past which the client is not read. */
const MAX_WAITING = 32;
const MAX_WAITING_BYTES = 256 * 1024;

/** Bodies up to this size are copied behind their head and written in one piece. */
const ONE_WRITE_BYTES = 64 * 1024;

const CONTINUE = Buffer.from('HTTP/1.1 100 Continue\r\n\r\n');
const ALLOW = [...SERVED_METHODS].join(', ');

/** OPTIONS *: answered here (no route serves it), with the request's X-Request-Id like every answer. */
function optionsStar(head: RequestHead): Buffer {
  const offered = head.fields.find((f) => f.name.toLowerCase() === 'x-request-id')?.value.toString('latin1');
  return Buffer.from(`HTTP/1.1 204 No Content\r\nallow: ${ALLOW}\r\nx-request-id: ${requestIdOf(offered)}\r\n\r\n`);
}

/**
 * A complete HTTP response with the error envelope, closing the connection.
 * Its X-Request-Id is always made here: the request it refuses was not read
 * far enough (or not well enough) to trust an id in it.
 */
function refusal(err: ServiceError): Buffer {
  const body = errorEnvelope(err);
  return Buffer.from(
    `HTTP/1.1 ${statusLine(err.status)}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nx-request-id: ${requestIdOf(undefined)}\r\nconnection: close\r\n\r\n${body}`,
  );
}

/** A request read from the client, waiting for its turn; or the front's own answer in its place. */
interface Exchange {
  head: RequestHead | null;
  body: Buffer[];
  bodyBytes: number;
  complete: boolean;
  continueSent: boolean;
  /** The front answers this one itself: a refusal (closes), or OPTIONS *. */
  answer: Buffer | null;
}

/**
 * One client connection of the front. The client's bytes go through the
 * strict parser; each complete request is re-serialized (canonical-head.ts)
 * and forwarded to uWS, one at a time: the next is forwarded only once the
 * response framer has seen the answer to the previous one. So answers reach
 * the client in request order, the front's own answers (refusals, 100
 * Continue, OPTIONS *) slot in where they belong, and nothing after a refused
 * request, or after one that closes the connection, is ever forwarded.
 *
 * The private connection to uWS is opened on the first request and again if
 * uWS closed an idle one; `openUpstream` gives it with the PROXY header that
 * names the client, which goes out in the same write as the first request.
 */
export class FrontConnection {
  private readonly parser: RequestParser;
  private readonly framer: ResponseFramer;
  private readonly waiting: Exchange[] = [];
  private waitingBytes = 0;
  private inFlight: Exchange | null = null;
  /** Bytes of the in-flight exchange's answer have reached the client. */
  private answering = false;
  private upstream: Socket | null = null;
  private clientEnded = false;
  /** The answer that ends the connection was sent (or the connection is gone): nothing more is read. */
  private closing = false;
  private finished = false;
  private paused = false;
  private upstreamPaused = false;
  /** The PROXY header for a new private connection: sent in the same write as its first request. */
  private preamble: Buffer | null = null;
  /** Last traffic, from the listener's coarse clock. */
  private lastActive: number;

  constructor(
    private readonly client: Socket,
    limits: ParserLimits,
    private readonly timings: FrontTimings,
    private readonly openUpstream: () => Upstream,
    private readonly onFinished: () => void,
  ) {
    this.lastActive = timings.now();
    this.parser = new RequestParser(limits, this.requestSink());
    this.framer = new ResponseFramer(this.responseSink());
    client.on('data', (chunk: Buffer) => this.onClientData(chunk));
    client.on('end', () => this.onClientEnd());
    client.on('error', () => this.destroy());
    client.on('close', () => this.destroy());
  }

  /**
   * Called by the listener's sweep about once a second (cheaper than a timer
   * per socket, which Node re-arms on every read and write): closes the
   * connection once it has been quiet for `idleMs` with nothing in flight.
   */
  sweep(now: number): void {
    if (now - this.lastActive >= this.timings.idleMs) this.onIdle();
  }

  /** Not yet ending: a drain waits for these. */
  get open(): boolean {
    return !this.closing && !this.finished;
  }

  /**
   * A drain's sweep: ends the connection once it has sat `idleMs` between
   * requests. A busy one is not touched: its next answer carries
   * `connection: close` (uWS adds it while the node closes) and ends it.
   */
  closeIfIdle(now: number, idleMs: number, notBefore = 0): void {
    if (this.inFlight === null && this.waiting.length === 0 && now - Math.max(this.lastActive, notBefore) >= idleMs) this.onIdle();
  }

  private requestSink(): RequestSink {
    const last = () => this.waiting[this.waiting.length - 1]!;
    return {
      head: (head) => {
        this.waiting.push({ head, body: [], bodyBytes: 0, complete: false, continueSent: false, answer: head.target === '*' ? optionsStar(head) : null });
      },
      body: (data) => {
        const exchange = last();
        exchange.body.push(data);
        exchange.bodyBytes += data.length;
        this.waitingBytes += data.length;
      },
      end: () => {
        last().complete = true;
      },
      error: (err) => {
        // A request cut short by the refusal is never forwarded: the refusal takes its place.
        if (this.waiting.length > 0 && !last().complete) this.waitingBytes -= this.waiting.pop()!.bodyBytes;
        this.waiting.push({ head: null, body: [], bodyBytes: 0, complete: true, continueSent: false, answer: refusal(err) });
      },
    };
  }

  private responseSink(): ResponseSink {
    return {
      data: (bytes) => {
        this.answering = true;
        this.lastActive = this.timings.now();
        if (!this.client.write(bytes) && !this.upstreamPaused && this.upstream) {
          // The client reads slower than uWS answers: stop reading uWS until it catches up.
          const upstream = this.upstream;
          this.upstreamPaused = true;
          upstream.pause();
          this.client.once('drain', () => {
            this.upstreamPaused = false;
            upstream.resume();
          });
        }
      },
      complete: (close) => {
        const exchange = this.inFlight;
        this.inFlight = null;
        this.answering = false;
        if (close || exchange?.head?.close) this.endGracefully();
        else this.pump();
      },
    };
  }

  private onClientData(chunk: Buffer): void {
    if (this.closing || this.finished) return; // lingering: read and drop
    this.lastActive = this.timings.now();
    this.parser.push(chunk);
    this.pump();
  }

  private onClientEnd(): void {
    this.clientEnded = true;
    if (this.closing) {
      this.destroy();
      return;
    }
    this.parser.finish();
    this.pump();
  }

  /** Sends what can be sent now, in order; forwards the next complete request when uWS is free. */
  private pump(): void {
    while (!this.closing && this.inFlight === null && this.waiting.length > 0) {
      const next = this.waiting[0]!;
      if (!next.complete) {
        const head = next.head!;
        if (head.expectContinue && !next.continueSent && (head.chunked || head.contentLength > 0)) {
          next.continueSent = true;
          this.client.write(CONTINUE);
        }
        break;
      }
      this.waiting.shift();
      this.waitingBytes -= next.bodyBytes;
      if (next.answer !== null) {
        if (next.head === null) {
          this.refuse(next.answer);
          return;
        }
        this.client.write(next.answer);
        if (next.head.close) {
          this.endGracefully();
          return;
        }
        continue;
      }
      this.forward(next);
    }
    if (this.closing) return;
    if (this.inFlight === null && this.waiting.length === 0 && (this.clientEnded || this.parser.stopped)) {
      this.endGracefully();
      return;
    }
    const backlog = this.inFlight !== null && (this.waiting.length > MAX_WAITING || this.waitingBytes > MAX_WAITING_BYTES);
    if (backlog && !this.paused) {
      this.paused = true;
      this.client.pause();
    } else if (!backlog && this.paused) {
      this.paused = false;
      this.client.resume();
    }
  }

  private forward(exchange: Exchange): void {
    const upstream = this.upstream ?? this.connectUpstream();
    const head = exchange.head!;
    this.inFlight = exchange;
    this.framer.expectHead(head.method === 'HEAD');
    const whole = exchange.bodyBytes <= ONE_WRITE_BYTES;
    // Up to ONE_WRITE_BYTES of body: head and body in one buffer and one write() (cheaper than a corked writev).
    let canonical = canonicalHead(head, exchange.bodyBytes, whole ? exchange.body : []);
    if (this.preamble !== null) {
      // uWS 20.30 cannot take a head over 4 KiB in the read after a PROXY header
      // that came alone (it closes): the two always travel in one write.
      canonical = Buffer.concat([this.preamble, canonical]);
      this.preamble = null;
    }
    if (whole) {
      upstream.write(canonical);
    } else {
      upstream.cork();
      upstream.write(canonical);
      for (const part of exchange.body) upstream.write(part);
      upstream.uncork();
    }
  }

  private connectUpstream(): Socket {
    const { socket: upstream, preamble } = this.openUpstream();
    this.upstream = upstream;
    this.preamble = preamble;
    upstream.on('data', (chunk: Buffer) => this.framer.push(chunk));
    const gone = () => this.onUpstreamGone(upstream);
    upstream.on('end', gone);
    upstream.on('close', gone);
    upstream.on('error', gone);
    return upstream;
  }

  /**
   * uWS closed the private connection. Idle, that is its idle timeout: the next
   * request opens another. With an exchange in flight: a 503 if nothing of its
   * answer was sent yet (every complete request gets an answer), else the
   * client connection ends (the answer cannot be completed).
   */
  private onUpstreamGone(upstream: Socket): void {
    if (this.upstream !== upstream) return;
    this.upstream = null;
    upstream.destroy();
    if (this.finished || this.closing || this.inFlight === null) return;
    this.inFlight = null;
    if (this.framer.readingToClose) this.endGracefully();
    else if (!this.answering) this.refuse(refusal(new ServiceError('unavailable', 'The request could not be completed; retry it.')));
    else this.destroy();
  }

  private onIdle(): void {
    if (this.finished || this.closing) return;
    if (this.inFlight !== null) return; // uWS is still working on it
    // Idle between requests, or a request that stopped arriving: close, as uWS did.
    this.endGracefully();
  }

  /** The front's own answer that ends the connection, then a lingering close. */
  private refuse(answer: Buffer): void {
    this.client.write(answer);
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
    this.upstream?.destroy();
    this.upstream = null;
    if (this.paused) this.client.resume();
    this.client.end();
    if (this.clientEnded) {
      this.client.once('finish', () => this.destroy());
      return;
    }
    setTimeout(() => this.destroy(), this.timings.lingerMs).unref();
  }

  destroy(): void {
    if (this.finished) return;
    this.finished = true;
    this.closing = true;
    this.client.destroy();
    this.upstream?.destroy();
    this.upstream = null;
    this.onFinished();
  }
}
