import type http from 'node:http';
import { isIP } from 'node:net';
import { urlToHttpOptions } from 'node:url';
import { Http1Pool, type Http1Error, type Http1Target } from './http1-pool.js';
import { OriginSlots } from '../flow/origin-slots.js';
import type { SsrfGuard } from './ssrf-guard.js';
import { mayBeStaleConnection, UndiciClient, type TlsTrust } from './undici-client.js';

export interface DispatchRequest {
  url: URL;
  /** Made for this one request: the dispatcher adds content-length to it rather than copy it. */
  headers: Record<string, string>;
  body: Buffer;
  timeoutMs: number;
}

/** What one attempt came to: a status, or a network error / timeout. */
export type DispatchResult =
  | { kind: 'response'; status: number; headers: http.IncomingHttpHeaders; body: Buffer; durationMs: number }
  | { kind: 'error'; error: string; code: string; durationMs: number };

/**
 * What a request needs from a target's URL (its origin, path and query, URL
 * credentials, the address literal if any), derived once: a target's URL
 * object lives as long as the route cache.
 */
interface UrlParts {
  origin: string;
  /** The host when it is an IP literal (brackets stripped), else null: judged before any connection. */
  literal: string | null;
  /** Path and query, as sent on the request line. */
  path: string;
  /** `Basic …` from the URL's credentials (as node:http sends them), or null. */
  authorization: string | null;
  /** For http: URLs, what Http1Pool needs (https: goes through undici). */
  http1: Http1Target | null;
}
const urlParts = new WeakMap<URL, UrlParts>();
function partsOf(url: URL): UrlParts {
  let parts = urlParts.get(url);
  if (parts === undefined) {
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const all = urlToHttpOptions(url);
    const path = all.path ?? '/';
    const auth = all.auth ?? null;
    const isHttps = url.protocol === 'https:';
    const http1 = isHttps ? null : { host: url.host, hostname: host, port: url.port === '' ? 80 : Number(url.port), path, auth };
    const authorization = auth === null ? null : `Basic ${Buffer.from(auth).toString('base64')}`;
    parts = { origin: url.origin, literal: isIP(host) ? host : null, path, authorization, http1 };
    urlParts.set(url, parts);
  }
  return parts;
}

/**
 * Sends one HTTP POST: http: targets through Http1Pool (streamgate's own
 * keep-alive HTTP/1.1 client), https: targets through undici (UndiciClient:
 * keep-alive, SSRF-guarded connect pinned to a checked address, extra CAs
 * from delivery.tls.caFile). At most `maxSocketsPerOrigin` requests in flight
 * per origin (the rest queue before their deadline starts). One deadline
 * covers connect, headers and body; redirects are never followed, and at
 * most `maxResponseBytes` of the response are read: past that the connection
 * is cut. An https: request that fails on a connection the receiver closed
 * before any answer (a kept-alive connection closed as it was reused) is
 * sent once more on a fresh connection within the same deadline.
 */
export class HttpDispatcher {
  private readonly slots: OriginSlots;
  private readonly http1: Http1Pool;
  private readonly undici: UndiciClient;

  private readonly guard: SsrfGuard;
  constructor(
    guard: SsrfGuard,
    maxSocketsPerOrigin: number,
    maxResponseBytes: number,
    tls: TlsTrust = {},
  ) {
    this.guard = guard;
    this.slots = new OriginSlots(maxSocketsPerOrigin);
    this.http1 = new Http1Pool(guard.lookup as never, maxResponseBytes);
    this.undici = new UndiciClient(guard, maxSocketsPerOrigin, maxResponseBytes, tls);
  }

  /** Requests in flight per origin, for the metrics gauge. */
  inFlightByOrigin(): Array<[origin: string, active: number]> {
    return this.slots.inFlight();
  }

  send(req: DispatchRequest): Promise<DispatchResult> {
    const parts = partsOf(req.url);
    // Judged before any connection; names are judged by the connectors, on every address.
    if (parts.literal !== null && !this.guard.isAllowed(parts.literal)) {
      return Promise.resolve({ kind: 'error', code: 'ESSRF', error: `refused address ${parts.literal}`, durationMs: 0 });
    }
    req.headers['content-length'] = String(req.body.length);
    const release = this.slots.tryAcquire(parts.origin);
    // A free slot (the usual case): no async frame around the request.
    if (release !== null) return this.sendIn(req, parts, release);
    return this.slots.acquire(parts.origin).then((later) => this.sendIn(req, parts, later));
  }

  /** Sends holding the origin's slot; the slot is given back however the request ends. */
  private sendIn(req: DispatchRequest, parts: UrlParts, release: () => void): Promise<DispatchResult> {
    if (parts.http1 !== null) return this.sendHttp1(req, parts.http1, release);
    return this.sendUndici(req, parts).finally(release);
  }

  /** The pool keeps the deadline itself (one timer on the exchange, no closures per request). */
  private sendHttp1(req: DispatchRequest, target: Http1Target, release: () => void): Promise<DispatchResult> {
    const started = performance.now();
    return this.http1.post(target, req.headers, req.body, req.timeoutMs).then(
      (r): DispatchResult => {
        release();
        return { kind: 'response', status: r.status, headers: r.headers, body: r.body, durationMs: Math.round(performance.now() - started) };
      },
      (err: Http1Error): DispatchResult => {
        release();
        return { kind: 'error', error: err.message, code: err.code, durationMs: Math.round(performance.now() - started) };
      },
    );
  }

  /** Through undici (https:). */
  private sendUndici(req: DispatchRequest, parts: UrlParts): Promise<DispatchResult> {
    const headers = parts.authorization !== null && !hasHeader(req.headers, 'authorization') ? { ...req.headers, authorization: parts.authorization } : req.headers;
    return underDeadline(req.timeoutMs, ({ finish, elapsed, onAbandon }) => {
      let abandoned = false;
      let stop: (() => void) | null = null;
      onAbandon(() => {
        abandoned = true;
        stop?.();
      });
      const attempt = (mayRetry: boolean) => {
        void this.undici.post(parts.origin, parts.path, headers, req.body, (a) => (stop = a)).then((r) => {
          if (mayRetry && !abandoned && mayBeStaleConnection(r)) return attempt(false);
          if (r.kind === 'response') finish({ kind: 'response', status: r.status, headers: r.headers, body: r.body, durationMs: elapsed() });
          else finish({ kind: 'error', error: r.error, code: r.code, durationMs: elapsed() });
        });
      };
      attempt(true);
    });
  }

  close(): void {
    this.http1.close();
    this.undici.close().catch(() => {});
  }
}

function hasHeader(headers: Record<string, string>, lower: string): boolean {
  for (const name in headers) if (name.toLowerCase() === lower) return true;
  return false;
}

/** What an attempt's code gets from underDeadline. */
interface Attempt {
  /** Ends the attempt; the first call wins. */
  finish(result: DispatchResult): void;
  /** Milliseconds since the attempt started. */
  elapsed(): number;
  /** How to stop the attempt's I/O when the deadline passes. */
  onAbandon(abandon: () => void): void;
}

/** Runs one attempt under one deadline: past it the attempt ends as ETIMEDOUT and its I/O is abandoned. */
function underDeadline(timeoutMs: number, start: (attempt: Attempt) => void): Promise<DispatchResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  return new Promise<DispatchResult>((resolve) => {
    let settled = false;
    let abandon: (() => void) | null = null;
    const finish = (result: DispatchResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      resolve(result);
    };
    const deadline = setTimeout(() => {
      finish({ kind: 'error', error: `no complete response within ${timeoutMs} ms`, code: 'ETIMEDOUT', durationMs: elapsed() });
      abandon?.();
    }, timeoutMs);
    start({ finish, elapsed, onAbandon: (fn) => (abandon = fn) });
  });
}
