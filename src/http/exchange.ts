import type { HttpRequest as UwsRequest, HttpResponse as UwsResponse } from 'uWebSockets.js';
import { errorEnvelope, ServiceError } from '../errors.js';
import { answeredChannel } from '../observability/channels.js';
import { ClientAddressSource } from './client-address.js';
import { unpackFields } from './guard-marks.js';
import { requestIdOf } from './request-id.js';
import { statusLine } from './status-line.js';

/**
 * One HTTP exchange over uWebSockets.js, captured so handlers can be async.
 * uWS's request object is only valid during the synchronous part of the
 * handler, so method, path, query, headers and params are copied up front,
 * and the body is read from the first tick on, with the size limit enforced
 * as chunks arrive (a too-large body is refused before it is buffered whole).
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
  body: Promise<Buffer>;
  aborted: boolean;
  answered: boolean;
  send(status: number, body: string | Buffer, headers?: Record<string, string>, closeConnection?: boolean): void;
  sendJson(status: number, value: unknown): void;
  /** Closes the connection after the answer when `closeConnection`; payload_too_large asks the client to close instead. */
  sendError(err: ServiceError, extraHeaders?: Record<string, string>, closeConnection?: boolean): void;
}


/** See Exchange.ingress: plain fields written by ingress before it answers, so the answer is the only message. */
export interface IngressOutcome {
  queue: { readonly tenantPublicId: string; readonly queueName: string } | null;
  bytes: number;
  appendMs: number;
  replayed: boolean;
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

const DIRECT = new ClientAddressSource(false);
const JSON_HEADERS = { 'content-type': 'application/json' };
/** Shared by every exchange without a body: nothing to read, nothing to allocate. */
const NO_BODY: Promise<Buffer> = Promise.resolve(Buffer.alloc(0));

/**
 * `guarded`: the request came through the header guard (src/http/header-guard.ts),
 * so its marker headers are trusted and the client address is the one the
 * guard's PROXY header named.
 */
export function captureExchange(res: UwsResponse, req: UwsRequest, paramCount: number, maxBodyBytes: number, addresses: ClientAddressSource = DIRECT, lifecycle?: ConnectionLifecycle, route = ''): Exchange {
  const headers: Record<string, string> = {};
  req.forEach((name, value) => {
    headers[name] = name in headers ? `${headers[name]}, ${value}` : value;
  });
  // Only the front can have set the mark: it drops a client's fields under its prefix.
  if (addresses.guarded) unpackFields(headers);
  const params: string[] = [];
  for (let i = 0; i < paramCount; i++) params.push(req.getParameter(i) ?? '');
  const method = req.getCaseSensitiveMethod().toUpperCase();
  const exchange = new UwsExchange(res, method, req.getUrl(), req.getQuery() ?? '', headers, params, addresses, requestIdOf(headers['x-request-id']), lifecycle, route);
  // A client that goes away mid-body sends no more data: without this the
  // handler awaiting the body would wait (and hold its memory) forever.
  res.onAborted(() => exchange.abort());
  const chunked = /chunked/i.test(headers['transfer-encoding'] ?? '');
  exchange.body = readBody(exchange, res, headers['content-length'], chunked, maxBodyBytes, method);
  return exchange;
}

/**
 * A class rather than an object literal with closures: ingress makes one per
 * request, and methods on the prototype cost no allocation each time.
 */
class UwsExchange implements Exchange {
  body: Promise<Buffer> = NO_BODY;
  aborted = false;
  answered = false;
  status = 0;
  errorCode: string | null = null;
  // Allocated with the exchange (one object of a stable shape) so the metrics read it without checks.
  ingress: IngressOutcome = { queue: null, bytes: -1, appendMs: -1, replayed: false };
  /** Set while a body is being read: rejects it when the client goes away. */
  abortBody: (() => void) | null = null;
  private remote: string | null = null;

  constructor(
    private readonly res: UwsResponse,
    readonly method: string,
    readonly path: string,
    readonly query: string,
    readonly headers: Readonly<Record<string, string>>,
    readonly params: readonly string[],
    private readonly addresses: ClientAddressSource,
    readonly requestId: string,
    private readonly lifecycle: ConnectionLifecycle | undefined,
    readonly route: string,
  ) {}

  // Read on first use only: a getpeername() per request showed up in profiles,
  // and most routes never look at the address.
  get remoteAddress(): string {
    if (this.remote === null) {
      try {
        this.remote = this.addresses.of(this.res);
      } catch {
        this.remote = ''; // the response is gone (aborted): nobody will be answered
      }
    }
    return this.remote;
  }

  abort(): void {
    this.aborted = true;
    this.abortBody?.();
  }

  send(status: number, body: string | Buffer, extra?: Record<string, string>, closeConnection = false): void {
    if (this.aborted || this.answered) return;
    this.answered = true;
    this.status = status;
    if (this.lifecycle?.closing) extra = { ...extra, connection: 'close' };
    const res = this.res;
    res.cork(() => {
      res.writeStatus(statusLine(status));
      res.writeHeader('x-request-id', this.requestId);
      if (extra) for (const name in extra) res.writeHeader(name, extra[name]!);
      res.end(body, closeConnection);
    });
    // The exchange is the message: nothing is allocated per answer for metrics.
    if (answeredChannel.hasSubscribers) answeredChannel.publish(this);
  }

  sendJson(status: number, value: unknown): void {
    this.send(status, JSON.stringify(value), JSON_HEADERS);
  }

  /**
   * A refused body may still be streaming in (payload_too_large). Closing at
   * once would leave its bytes unread, the kernel would reset the connection,
   * and the reset can destroy the answer before the client reads it (seen with
   * chunked uploads when the header guard is off). So the answer says
   * `connection: close` and the socket stays open: uWS reads and drops the rest
   * of the body, and the client closes once it has the answer.
   */
  sendError(err: ServiceError, extraHeaders?: Record<string, string>, closeConnection = false): void {
    let headers: Record<string, string> = extraHeaders ? { ...JSON_HEADERS, ...extraHeaders } : JSON_HEADERS;
    if (err.code === 'payload_too_large' && !closeConnection) headers = { ...headers, connection: 'close' };
    if (!this.answered) this.errorCode = err.code;
    this.send(err.status, errorEnvelope(err), headers, closeConnection);
  }
}

function readBody(exchange: UwsExchange, res: UwsResponse, contentLength: string | undefined, chunked: boolean, limit: number, method: string): Promise<Buffer> {
  // No Content-Length and no chunked encoding means no body (RFC 9112 §6.3).
  if (method === 'GET' || method === 'HEAD' || contentLength === '0' || (contentLength === undefined && !chunked)) return NO_BODY;
  if (contentLength !== undefined && /^\d+$/.test(contentLength) && Number(contentLength) > limit) {
    const refused = Promise.reject(new ServiceError('payload_too_large', `The body is over the limit of ${limit} bytes.`));
    // Nobody may await the body (an early error answer): don't let that reject unhandled.
    refused.catch(() => {});
    return refused;
  }
  const body = new Promise<Buffer>((resolve, reject) => {
    exchange.abortBody = () => reject(new ServiceError('invalid_body', 'The client closed the connection before the body was complete.'));
    const chunks: Buffer[] = [];
    let size = 0;
    let refused = false;
    res.onData((chunk, isLast) => {
      if (refused) return;
      size += chunk.byteLength;
      if (size > limit) {
        refused = true;
        reject(new ServiceError('payload_too_large', `The body is over the limit of ${limit} bytes.`));
        return;
      }
      // uWS reuses the chunk's memory after this callback returns: copy it,
      // into Node's buffer pool when small (a typical event body), which costs
      // no malloc and no ArrayBuffer of its own as chunk.slice() would.
      const copy = Buffer.allocUnsafe(chunk.byteLength);
      copy.set(new Uint8Array(chunk));
      chunks.push(copy);
      if (isLast) resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    });
  });
  body.catch(() => {});
  return body;
}
