import { connect, type Socket } from 'node:net';

/** How one request of a keep-alive client ended. */
export type Outcome =
  | { kind: 'answered'; at: number; status: number; body: string; close: boolean }
  /** The connection was refused: nothing was sent (the listener is closed). */
  | { kind: 'refused'; at: number }
  /** The request was sent and the connection ended before a complete answer: what a drain must never do. */
  | { kind: 'broken'; at: number; detail: string };

/**
 * A raw HTTP/1.1 client that keeps its connection alive between requests,
 * as a load balancer or an SDK does, and tells apart a refused connection
 * (fine after the listener closed) from a request cut off mid-way (not fine).
 * After an answer with `connection: close` it opens a new connection.
 */
export class KeepAliveClient {
  readonly outcomes: Outcome[] = [];
  private socket: Socket | null = null;
  private buffer = Buffer.alloc(0);
  private waiter: ((ended: string | null) => void) | null = null;

  private readonly port: number;
  constructor(port: number) {
    this.port = port;
  }

  /** Sends `request()` one after another (pausing `pauseMs`) until `stop()` says so. */
  async run(request: () => Buffer, stop: () => boolean, pauseMs = 10): Promise<Outcome[]> {
    while (!stop()) {
      this.outcomes.push(await this.once(request()));
      await new Promise((r) => setTimeout(r, pauseMs));
    }
    this.socket?.destroy();
    return this.outcomes;
  }

  private async once(bytes: Buffer): Promise<Outcome> {
    if (!this.socket) {
      const opened = await this.open();
      if (!opened) return { kind: 'refused', at: Date.now() };
    }
    const socket = this.socket!;
    this.buffer = Buffer.alloc(0);
    let endedWhy: string | null = null;
    const ended = new Promise<string | null>((resolve) => (this.waiter = resolve)).then((why) => (endedWhy = why));
    socket.write(bytes);
    for (;;) {
      const parsed = parse(this.buffer);
      if (parsed) {
        this.waiter = null;
        if (parsed.close || endedWhy !== null) this.drop();
        return { kind: 'answered', at: Date.now(), ...parsed };
      }
      const why = await Promise.race([ended, new Promise<null>((r) => setTimeout(() => r(null), 5))]);
      if (why !== null && !parse(this.buffer)) {
        this.drop();
        return { kind: 'broken', at: Date.now(), detail: why };
      }
    }
  }

  private open(): Promise<boolean> {
    return new Promise((resolve) => {
      const socket = connect({ host: '127.0.0.1', port: this.port });
      socket.once('connect', () => {
        this.socket = socket;
        resolve(true);
      });
      socket.on('data', (chunk: Buffer) => {
        this.buffer = Buffer.concat([this.buffer, chunk]);
      });
      socket.on('error', (err: NodeJS.ErrnoException) => {
        if (this.socket !== socket) resolve(false);
        else this.end(socket, err.code ?? err.message);
      });
      socket.on('end', () => this.end(socket, 'FIN'));
      socket.on('close', () => this.end(socket, 'closed'));
    });
  }

  /** The connection ended: a waiting request is cut off; an idle one is just gone. */
  private end(socket: Socket, why: string): void {
    if (this.socket !== socket) return;
    const waiter = this.waiter;
    this.waiter = null;
    if (waiter) waiter(why);
    else this.drop();
  }

  private drop(): void {
    this.socket?.destroy();
    this.socket = null;
  }
}

/** A complete response at the start of `raw` (Content-Length framed), or null. */
function parse(raw: Buffer): { status: number; body: string; close: boolean } | null {
  const headEnd = raw.indexOf('\r\n\r\n');
  if (headEnd < 0) return null;
  const head = raw.subarray(0, headEnd).toString('latin1');
  const status = Number(head.slice(9, 12));
  const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
  if (raw.length < headEnd + 4 + length) return null;
  return { status, body: raw.subarray(headEnd + 4, headEnd + 4 + length).toString(), close: /\r\nconnection: *close/i.test(head) };
}
