import http from 'node:http';
import https from 'node:https';
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
 * Sends one delivery attempt. Keep-alive agents per scheme (bounded sockets per
 * origin); the SSRF guard resolves the host and refuses forbidden addresses at
 * connect. One deadline covers connect, headers and body; redirects are never
 * followed (node:http does not), and at most `maxResponseBytes` are read.
 */
export class HttpDispatcher {
  private readonly httpAgent: http.Agent;
  private readonly httpsAgent: https.Agent;

  constructor(
    guard: SsrfGuard,
    maxSocketsPerOrigin: number,
    private readonly maxResponseBytes: number,
  ) {
    const opts = { keepAlive: true, maxSockets: maxSocketsPerOrigin, lookup: guard.lookup as never, scheduling: 'lifo' as const };
    this.httpAgent = new http.Agent(opts);
    this.httpsAgent = new https.Agent(opts);
  }

  send(req: DispatchRequest): Promise<DispatchResult> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    return new Promise<DispatchResult>((resolve) => {
      let settled = false;
      const finish = (result: DispatchResult) => {
        if (settled) return;
        settled = true;
        clearTimeout(deadline);
        resolve(result);
      };
      const isHttps = req.url.protocol === 'https:';
      const outgoing = (isHttps ? https : http).request(req.url, {
        method: 'POST',
        agent: isHttps ? this.httpsAgent : this.httpAgent,
        headers: { ...req.headers, 'content-length': String(req.body.length) },
      });
      const deadline = setTimeout(() => {
        finish({ kind: 'error', error: `no complete response within ${req.timeoutMs} ms`, code: 'ETIMEDOUT', durationMs: elapsed() });
        outgoing.destroy();
      }, req.timeoutMs);
      outgoing.on('error', (err: NodeJS.ErrnoException) => {
        finish({ kind: 'error', error: err.message, code: err.code ?? 'ERR', durationMs: elapsed() });
      });
      outgoing.on('response', (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          if (size < this.maxResponseBytes) chunks.push(chunk.subarray(0, this.maxResponseBytes - size));
          size += chunk.length;
          // A receiver that sends more than we read gets its connection closed
          // rather than us draining an unbounded body.
          if (size > this.maxResponseBytes * 4) res.destroy();
        });
        res.on('end', () =>
          finish({ kind: 'response', status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks), durationMs: elapsed() }),
        );
        res.on('close', () => {
          if (size > this.maxResponseBytes) {
            // We cut the body ourselves: the status and headers are still the answer.
            finish({ kind: 'response', status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks), durationMs: elapsed() });
          } else {
            finish({ kind: 'error', error: 'connection closed before the response ended', code: 'ECONNRESET', durationMs: elapsed() });
          }
        });
        res.on('error', (err: NodeJS.ErrnoException) =>
          finish({ kind: 'error', error: err.message, code: err.code ?? 'ERR', durationMs: elapsed() }),
        );
      });
      outgoing.end(req.body);
    });
  }

  close(): void {
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
  }
}
