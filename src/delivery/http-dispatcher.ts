import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { OriginSlots } from './origin-slots.js';
import type { SsrfGuard } from './ssrf-guard.js';

export interface DispatchRequest {
  url: URL;
  headers: Record<string, string>;
  body: Buffer;
  timeoutMs: number;
}

/** What one attempt came to: a status, or a network error / timeout. */
export type DispatchResult =
  | { kind: 'response'; status: number; headers: http.IncomingHttpHeaders; body: Buffer; durationMs: number }
  | { kind: 'error'; error: string; code: string; durationMs: number };

/**
 * Sends one HTTP POST. Keep-alive agents per scheme, at most
 * `maxSocketsPerOrigin` requests in flight per origin (the rest queue before
 * their deadline starts); the SSRF guard resolves the host and refuses
 * forbidden addresses at connect. One deadline covers connect, headers and
 * body; redirects are never followed (node:http does not), and at most
 * `maxResponseBytes` of the response are read: past that the connection is cut.
 */
/** URL.origin builds a new string on every read; a target's URL object lives long. */
const origins = new WeakMap<URL, string>();
function originOf(url: URL): string {
  let origin = origins.get(url);
  if (origin === undefined) {
    origin = url.origin;
    origins.set(url, origin);
  }
  return origin;
}

export class HttpDispatcher {
  private readonly httpAgent: http.Agent;
  private readonly httpsAgent: https.Agent;
  private readonly slots: OriginSlots;

  constructor(
    private readonly guard: SsrfGuard,
    maxSocketsPerOrigin: number,
    private readonly maxResponseBytes: number,
  ) {
    const opts = { keepAlive: true, maxSockets: maxSocketsPerOrigin, lookup: guard.lookup as never, scheduling: 'lifo' as const };
    this.httpAgent = new http.Agent(opts);
    this.httpsAgent = new https.Agent(opts);
    this.slots = new OriginSlots(maxSocketsPerOrigin);
  }

  async send(req: DispatchRequest): Promise<DispatchResult> {
    // node:http does not call the agent's lookup for an address literal: judge it here.
    const host = req.url.hostname.replace(/^\[|\]$/g, '');
    if (isIP(host) && !this.guard.isAllowed(host)) {
      return { kind: 'error', code: 'ESSRF', error: `refused address ${host}`, durationMs: 0 };
    }
    const origin = originOf(req.url);
    const release = this.slots.tryAcquire(origin) ?? (await this.slots.acquire(origin));
    try {
      return await this.sendNow(req);
    } finally {
      release();
    }
  }

  private sendNow(req: DispatchRequest): Promise<DispatchResult> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    return new Promise<DispatchResult>((resolve) => {
      let settled = false;
      let deadline: NodeJS.Timeout | undefined;
      const finish = (result: DispatchResult) => {
        if (settled) return;
        settled = true;
        clearTimeout(deadline);
        resolve(result);
      };
      const isHttps = req.url.protocol === 'https:';
      let outgoing: http.ClientRequest;
      try {
        outgoing = (isHttps ? https : http).request(req.url, {
          method: 'POST',
          agent: isHttps ? this.httpsAgent : this.httpAgent,
          headers: { ...req.headers, 'content-length': String(req.body.length) },
        });
      } catch (err) {
        // e.g. a header value node:http refuses: the request never left.
        finish({ kind: 'error', error: (err as Error).message, code: (err as NodeJS.ErrnoException).code ?? 'EREQUEST', durationMs: elapsed() });
        return;
      }
      deadline = setTimeout(() => {
        finish({ kind: 'error', error: `no complete response within ${req.timeoutMs} ms`, code: 'ETIMEDOUT', durationMs: elapsed() });
        outgoing.destroy();
      }, req.timeoutMs);
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
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
  }
}
