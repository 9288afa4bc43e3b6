import type { HttpRequest as UwsRequest, HttpResponse as UwsResponse } from 'uWebSockets.js';
import { errorEnvelope, ServiceError } from '../errors.js';
import { decodeRawValue, MALFORMED_MARK, RAW_HEADERS_MARK } from './request-sanitizer.js';
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
  /** Behind the header guard: why a header line could not be passed on (the router answers 400). */
  readonly malformedHeader: string | null;
  body: Promise<Buffer>;
  aborted: boolean;
  answered: boolean;
  send(status: number, body: string | Buffer, headers?: Record<string, string>, closeConnection?: boolean): void;
  sendJson(status: number, value: unknown): void;
  /** Closes the connection after the answer when `closeConnection` (by default only for payload_too_large). */
  sendError(err: ServiceError, extraHeaders?: Record<string, string>, closeConnection?: boolean): void;
}


const JSON_HEADERS = { 'content-type': 'application/json' };

/**
 * `guarded`: the request came through the header guard (src/http/header-guard.ts),
 * so its marker headers are trusted and the client address is the one the
 * guard's PROXY header named.
 */
export function captureExchange(res: UwsResponse, req: UwsRequest, paramCount: number, maxBodyBytes: number, guarded = false): Exchange {
  const headers: Record<string, string> = {};
  req.forEach((name, value) => {
    headers[name] = name in headers ? `${headers[name]}, ${value}` : value;
  });
  let malformedHeader: string | null = null;
  if (guarded) malformedHeader = unwrapGuardMarks(headers);
  const params: string[] = [];
  for (let i = 0; i < paramCount; i++) params.push(req.getParameter(i) ?? '');
  const method = req.getCaseSensitiveMethod().toUpperCase();
  let remote: string | null = null;

  const exchange: Exchange = {
    method,
    path: req.getUrl(),
    query: req.getQuery() ?? '',
    headers,
    params,
    // Read on first use only: a getpeername() per request showed up in profiles,
    // and most routes never look at the address.
    get remoteAddress(): string {
      if (remote === null) {
        try {
          remote = Buffer.from(guarded ? res.getProxiedRemoteAddressAsText() : res.getRemoteAddressAsText()).toString();
        } catch {
          remote = ''; // the response is gone (aborted): nobody will be answered
        }
      }
      return remote;
    },
    malformedHeader,
    body: Promise.resolve(Buffer.alloc(0)),
    aborted: false,
    answered: false,
    send(status, body, extra, closeConnection = false) {
      if (exchange.aborted || exchange.answered) return;
      exchange.answered = true;
      res.cork(() => {
        res.writeStatus(statusLine(status));
        if (extra) for (const name in extra) res.writeHeader(name, extra[name]!);
        res.end(body, closeConnection);
      });
    },
    sendJson(status, value) {
      exchange.send(status, JSON.stringify(value), JSON_HEADERS);
    },
    // A refused body may still be streaming in: close rather than read it.
    sendError(err, extraHeaders, closeConnection = err.code === 'payload_too_large') {
      exchange.send(err.status, errorEnvelope(err), extraHeaders ? { ...JSON_HEADERS, ...extraHeaders } : JSON_HEADERS, closeConnection);
    },
  };
  // A client that goes away mid-body sends no more data: without this the
  // handler awaiting the body would wait (and hold its memory) forever.
  let abortBody: (() => void) | null = null;
  res.onAborted(() => {
    exchange.aborted = true;
    abortBody?.();
  });
  const chunked = /chunked/i.test(headers['transfer-encoding'] ?? '');
  exchange.body = readBody(res, headers['content-length'], chunked, maxBodyBytes, method, (abort) => {
    abortBody = abort;
  });
  // Nobody may await the body (an early error answer): don't let that reject unhandled.
  exchange.body.catch(() => {});
  return exchange;
}

/** Restores the values the guard re-encoded and removes its marks; returns the malformed reason, if any. */
function unwrapGuardMarks(headers: Record<string, string>): string | null {
  const raw = headers[RAW_HEADERS_MARK];
  if (raw !== undefined) {
    for (const name of raw.split(',')) if (headers[name] !== undefined) headers[name] = decodeRawValue(headers[name]);
    delete headers[RAW_HEADERS_MARK];
  }
  const malformed = headers[MALFORMED_MARK];
  if (malformed === undefined) return null;
  delete headers[MALFORMED_MARK];
  return decodeURIComponent(malformed);
}

function readBody(
  res: UwsResponse,
  contentLength: string | undefined,
  chunked: boolean,
  limit: number,
  method: string,
  onAbort: (abort: () => void) => void,
): Promise<Buffer> {
  // No Content-Length and no chunked encoding means no body (RFC 9112 §6.3).
  if (method === 'GET' || method === 'HEAD' || contentLength === '0' || (contentLength === undefined && !chunked)) {
    return Promise.resolve(Buffer.alloc(0));
  }
  if (contentLength !== undefined && /^\d+$/.test(contentLength) && Number(contentLength) > limit) {
    return Promise.reject(new ServiceError('payload_too_large', `The body is over the limit of ${limit} bytes.`));
  }
  return new Promise<Buffer>((resolve, reject) => {
    onAbort(() => reject(new ServiceError('invalid_body', 'The client closed the connection before the body was complete.')));
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
      // uWS reuses the chunk's memory after this callback returns: copy it.
      chunks.push(Buffer.from(chunk.slice(0)));
      if (isLast) resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    });
  });
}
