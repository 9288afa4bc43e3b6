import { errorEnvelope, ServiceError } from '../errors.js';
import { answeredChannel, type IngressOutcome } from '../observability/channels.js';
import type { RequestHead } from './parser/parsed-head.js';
import { requestIdOf } from './request-id.js';
import { responseHead, type ResponseHeaders } from './response-head.js';

export type { ResponseHeaders };

/**
 * One HTTP exchange: the request the connection read (src/http/connection.ts)
 * and the one answer the handler gives. Handlers are async; the connection
 * dispatches its next request only once this one is answered, so answers
 * leave in request order.
 */
export interface Exchange {
  readonly method: string;
  /** Path as sent on the wire (still percent-encoded). */
  readonly path: string;
  /** Raw query string without the '?'. */
  readonly query: string;
  /** Header names lower-cased; a repeated header keeps the values joined with ', '. */
  readonly headers: Readonly<Record<string, string>>;
  readonly params: readonly string[];
  readonly remoteAddress: string;
  /** X-Request-Id: the client's when sane, else made here (src/http/request-id.ts); sent on every answer. */
  readonly requestId: string;
  /** The route pattern that took the request ('' for the fallback): what metrics label it by. */
  readonly route: string;
  /** The status answered (0 until then) and the catalog code of an error answer. */
  readonly status: number;
  readonly errorCode: string | null;
  /**
   * What ingress tells the metrics about an event it answered, read by the
   * answered-channel subscriber (one message per request, src/observability/ingress-metrics.ts):
   * the accepted event's queue and body bytes (null / -1 otherwise), the
   * append's duration in ms (-1 when not timed: nobody subscribed, or no append),
   * and whether the answer replayed an Idempotency-Key's first event id.
   */
  ingress: IngressOutcome;
  /** The whole body (the server dispatches a request once it has been read); rejects with 413 over the route's limit. */
  readonly body: Promise<Buffer>;
  /** The client went away before the answer: nothing will be sent. */
  aborted: boolean;
  answered: boolean;
  send(status: number, body: string | Buffer, headers?: ResponseHeaders, closeConnection?: boolean): void;
  sendJson(status: number, value: unknown): void;
  /** Closes the connection after the answer when `closeConnection`. */
  sendError(err: ServiceError, extraHeaders?: ResponseHeaders, closeConnection?: boolean): void;
}


/**
 * Shared by a node's exchanges: once `closing` (the node is shutting down and
 * no longer listens), every answer says `connection: close`, so a client on a
 * kept-alive connection finishes its exchange and goes elsewhere instead of
 * sending its next request into a connection about to end.
 */
export interface ConnectionLifecycle {
  closing: boolean;
}

/** What the exchange needs from its connection. */
export interface ExchangeConnection {
  /** The client's address: the socket's peer, or what a trusted balancer's PROXY header named. */
  readonly remoteAddress: string;
  /** Writes the answer's bytes; `close` ends the connection after them. */
  answer(head: string, body: string | Buffer | null, close: boolean): void;
}

const JSON_HEADERS = Object.freeze({ 'content-type': 'application/json' });

/**
 * A class rather than an object literal with closures: ingress makes one per
 * request, and methods on the prototype cost no allocation each time.
 */
export class ServerExchange implements Exchange {
  aborted = false;
  answered = false;
  status = 0;
  errorCode: string | null = null;
  // Allocated with the exchange (one object of a stable shape) so the metrics read it without checks.
  ingress: IngressOutcome = { queue: null, bytes: -1, appendMs: -1, replayed: false };
  readonly requestId: string;
  readonly headers: Readonly<Record<string, string>>;
  private bodyPromise: Promise<Buffer> | null = null;

  private readonly connection: ExchangeConnection;
  readonly method: string;
  readonly path: string;
  readonly query: string;
  readonly params: readonly string[];
  private readonly bodyBytes: Buffer;
  private readonly maxBodyBytes: number;
  private readonly lifecycle: ConnectionLifecycle;
  readonly route: string;
  private readonly headOnly: boolean;
  private readonly lastOnConnection: boolean;
  constructor(
    connection: ExchangeConnection,
    head: RequestHead,
    /** The method routes see: HEAD is served as GET, without the body (RFC 9110 §9.3.2). */
    method: string,
    path: string,
    query: string,
    params: readonly string[],
    bodyBytes: Buffer,
    maxBodyBytes: number,
    lifecycle: ConnectionLifecycle,
    route: string,
    headOnly: boolean,
    /** HTTP/1.0 or `Connection: close`: the connection ends after this answer. */
    lastOnConnection: boolean,
  ) {
    this.connection = connection;
    this.method = method;
    this.path = path;
    this.query = query;
    this.params = params;
    this.bodyBytes = bodyBytes;
    this.maxBodyBytes = maxBodyBytes;
    this.lifecycle = lifecycle;
    this.route = route;
    this.headOnly = headOnly;
    this.lastOnConnection = lastOnConnection;
    const headers = head.headers;
    // Host as the parser read it (from the field, or an absolute-form target's authority).
    if (head.host !== '') headers.host = head.host;
    // Framing is the parser's; handlers see the length of the body it read.
    if (head.framed) headers['content-length'] = String(bodyBytes.length);
    this.headers = headers;
    this.requestId = requestIdOf(headers['x-request-id']);
  }

  get remoteAddress(): string {
    return this.connection.remoteAddress;
  }

  get body(): Promise<Buffer> {
    if (this.bodyPromise === null) {
      if (this.bodyBytes.length > this.maxBodyBytes) {
        this.bodyPromise = Promise.reject(new ServiceError('payload_too_large', `The body is over the limit of ${this.maxBodyBytes} bytes.`));
        // Nobody may await it after an early error answer: not an unhandled rejection.
        this.bodyPromise.catch(() => {});
      } else {
        this.bodyPromise = Promise.resolve(this.bodyBytes);
      }
    }
    return this.bodyPromise;
  }

  /** The connection is gone: the handler may still finish, but nothing is written. */
  abort(): void {
    this.aborted = true;
  }

  send(status: number, body: string | Buffer, extra?: ResponseHeaders, closeConnection = false): void {
    if (this.aborted || this.answered) return;
    const close = closeConnection || this.lastOnConnection || this.lifecycle.closing;
    const length = typeof body === 'string' ? Buffer.byteLength(body) : body.length;
    // Made before the exchange counts as answered: if it throws, the router answers 500 instead.
    const head = responseHead(status, this.requestId, extra, length, close);
    this.answered = true;
    this.status = status;
    this.connection.answer(head, this.headOnly || length === 0 ? null : body, close);
    // The exchange is the message: nothing is allocated per answer for metrics.
    if (answeredChannel.hasSubscribers) answeredChannel.publish(this);
  }

  sendJson(status: number, value: unknown): void {
    this.send(status, JSON.stringify(value), JSON_HEADERS);
  }

  sendError(err: ServiceError, extraHeaders?: ResponseHeaders, closeConnection = false): void {
    const headers = extraHeaders ? { ...JSON_HEADERS, ...extraHeaders } : JSON_HEADERS;
    if (!this.answered) this.errorCode = err.code;
    this.send(err.status, errorEnvelope(err), headers, closeConnection);
  }
}
