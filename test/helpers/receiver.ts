import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Test } from 'tap';

export interface Received {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  at: number;
}

/** Decides the answer to one request; the default answers 200. */
export type Responder = (req: Received, res: http.ServerResponse) => void;

/**
 * A local receiver for deliveries: records every request it gets and answers
 * through a replaceable responder, so a test can make it fail and recover.
 */
export class Receiver {
  readonly requests: Received[] = [];
  responder: Responder = (_req, res) => res.end('ok');
  private waiters: Array<() => void> = [];

  private readonly server: http.Server;
  constructor(server: http.Server) {
    this.server = server;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  record(req: Received, res: http.ServerResponse): void {
    this.requests.push(req);
    this.responder(req, res);
    for (const wake of this.waiters.splice(0)) wake();
  }

  /** Waits until `predicate` holds over the requests, or fails after `timeoutMs`. */
  async waitFor(predicate: (requests: Received[]) => boolean, timeoutMs = 30_000, what = 'condition'): Promise<void> {
    const until = Date.now() + timeoutMs;
    while (!predicate(this.requests)) {
      const left = until - Date.now();
      if (left <= 0) throw new Error(`receiver: timed out waiting for ${what} (${this.requests.length} requests so far)`);
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, Math.min(left, 200));
      });
    }
  }

  eventIds(): string[] {
    return this.requests.map((r) => String(r.headers['x-service-event-id']));
  }
}

export async function startReceiver(t: Test): Promise<Receiver> {
  let receiver: Receiver | null = null;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () =>
      receiver!.record({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks), at: Date.now() }, res),
    );
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver = new Receiver(server);
  t.teardown(() => new Promise<void>((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  }));
  return receiver;
}
