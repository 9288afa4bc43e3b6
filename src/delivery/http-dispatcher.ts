import type http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { urlToHttpOptions } from 'node:url';
import { Http1Pool, type Http1Error, type Http1Target } from './http1-pool.js';
import { OriginSlots } from './origin-slots.js';
import type { SsrfGuard } from './ssrf-guard.js';

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
 * What node:http would derive from a target's URL on every request (its
 * origin, the options urlToHttpOptions makes, the address literal if any),
 * derived once: a target's URL object lives as long as the route cache.
 */
interface UrlParts {
  origin: string;
  /** The host when it is an IP literal (brackets stripped), else null: node:http skips the lookup for it. */
  literal: string | null;
  /** What node:http reads of urlToHttpOptions(url); hash, search, pathname and href it never reads. */
  options: Pick<ReturnType<typeof urlToHttpOptions>, 'protocol' | 'hostname' | 'path' | 'port' | 'auth'>;
  /** For http: URLs, what Http1Pool needs (https: goes through node:https). */
  http1: Http1Target | null;
}
const urlParts = new WeakMap<URL, UrlParts>();
function partsOf(url: URL): UrlParts {
  let parts = urlParts.get(url);
  if (parts === undefined) {
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const all = urlToHttpOptions(url);
    // Fewer keys: node:http and its agent copy the options object three times per request.
    const options: UrlParts['options'] = { protocol: all.protocol, hostname: all.hostname, path: all.path };
    if (all.port !== undefined) options.port = all.port;
    if (all.auth !== undefined) options.auth = all.auth;
    const isHttps = url.protocol === 'https:';
    const http1 = isHttps ? null : { host: url.host, hostname: host, port: url.port === '' ? 80 : Number(url.port), path: all.path ?? '/', auth: all.auth ?? null };
    parts = { origin: url.origin, literal: isIP(host) ? host : null, options, http1 };
    urlParts.set(url, parts);
  }
  return parts;
}

/**
 * Sends one HTTP POST: http: targets through Http1Pool (streamgate's own
 * keep-alive HTTP/1.1 client, well under half of node:http's CPU per request), https:
 * targets through a keep-alive node:https agent. At most
 * `maxSocketsPerOrigin` requests in flight per origin (the rest queue before
 * their deadline starts); the SSRF guard resolves the host and refuses
 * forbidden addresses at connect. One deadline covers connect, headers and
 * body; redirects are never followed, and at most `maxResponseBytes` of the
 * response are read: past that the connection is cut.
 */
export class HttpDispatcher {
  private readonly httpsAgent: https.Agent;
  private readonly slots: OriginSlots;
  private readonly http1: Http1Pool;

  constructor(
    private readonly guard: SsrfGuard,
    maxSocketsPerOrigin: number,
    private readonly maxResponseBytes: number,
  ) {
    const opts = { keepAlive: true, maxSockets: maxSocketsPerOrigin, lookup: guard.lookup as never, scheduling: 'lifo' as const };
    this.httpsAgent = new https.Agent(opts);
    this.slots = new OriginSlots(maxSocketsPerOrigin);
    this.http1 = new Http1Pool(guard.lookup as never, maxResponseBytes);
  }

  async send(req: DispatchRequest): Promise<DispatchResult> {
    const parts = partsOf(req.url);
    // node:http does not call the agent's lookup for an address literal: judge it here.
    if (parts.literal !== null && !this.guard.isAllowed(parts.literal)) {
      return { kind: 'error', code: 'ESSRF', error: `refused address ${parts.literal}`, durationMs: 0 };
    }
    const release = this.slots.tryAcquire(parts.origin) ?? (await this.slots.acquire(parts.origin));
    req.headers['content-length'] = String(req.body.length);
    try {
      return await (parts.http1 !== null ? this.sendHttp1(req, parts.http1) : this.sendHttps(req, parts));
    } finally {
      release();
    }
  }

  private sendHttp1(req: DispatchRequest, target: Http1Target): Promise<DispatchResult> {
    return underDeadline(req.timeoutMs, ({ finish, elapsed, onAbandon }) => {
      this.http1.post(target, req.headers, req.body, onAbandon).then(
        (r) => finish({ kind: 'response', status: r.status, headers: r.headers, body: r.body, durationMs: elapsed() }),
        (err: Http1Error) => finish({ kind: 'error', error: err.message, code: err.code, durationMs: elapsed() }),
      );
    });
  }

  /** https: through node:https. */
  private sendHttps(req: DispatchRequest, parts: UrlParts): Promise<DispatchResult> {
    return underDeadline(req.timeoutMs, ({ finish, elapsed, onAbandon }) => {
      let outgoing: http.ClientRequest;
      try {
        // What request(url, {…}) would build (urlToHttpOptions, then ours on top), minus the per-request URL work.
        outgoing = https.request({ ...parts.options, method: 'POST', agent: this.httpsAgent, headers: req.headers });
      } catch (err) {
        // e.g. a header value node:http refuses: the request never left.
        finish({ kind: 'error', error: (err as Error).message, code: (err as NodeJS.ErrnoException).code ?? 'EREQUEST', durationMs: elapsed() });
        return;
      }
      onAbandon(() => outgoing.destroy());
      outgoing.on('error', (err: NodeJS.ErrnoException) => {
        finish({ kind: 'error', error: err.message, code: err.code ?? 'ERR', durationMs: elapsed() });
      });
      outgoing.on('response', (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        let cut = false;
        const answer = (): DispatchResult => ({ kind: 'response', status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks), durationMs: elapsed() });
        res.on('data', (chunk: Buffer) => {
          if (cut) return;
          chunks.push(chunk.subarray(0, this.maxResponseBytes - size));
          size += chunk.length;
          if (size > this.maxResponseBytes) {
            // Read enough: the status and headers are the answer. Cut the rest.
            cut = true;
            finish(answer());
            res.destroy();
          }
        });
        res.on('end', () => finish(answer()));
        res.on('close', () => {
          if (!res.complete && !cut) finish({ kind: 'error', error: 'connection closed before the response ended', code: 'ECONNRESET', durationMs: elapsed() });
        });
        res.on('error', (err: NodeJS.ErrnoException) => {
          if (!cut) finish({ kind: 'error', error: err.message, code: err.code ?? 'ERR', durationMs: elapsed() });
        });
      });
      outgoing.end(req.body);
    });
  }

  close(): void {
    this.http1.close();
    this.httpsAgent.destroy();
  }
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
