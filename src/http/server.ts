import { createServer, type Server, type Socket } from 'node:net';
import { NetworkSet } from '../net/cidr.js';
import { HttpConnection, type ConnectionHost, type ConnectionTimings } from './connection.js';
import type { RequestHead } from './parser/parsed-head.js';
import type { ParserLimits } from './parser/request-parser.js';

/** Largest request head (request line and fields). */
export const MAX_HEAD_BYTES = 16_384;
/** Header fields one request may have (RFC 9110 sets no number). */
export const MAX_HEADER_FIELDS = 100;
/** How long a refused connection keeps draining the client's bytes before it is dropped. */
const LINGER_MS = 5_000;
const SWEEP_MS = 1_000;
/** The sweep's period while draining, when connections are waited for. */
const DRAIN_SWEEP_MS = 25;

/** Body limits by route family: server.maxBodyBytes for ingress, server.maxManagementBodyBytes for the rest. */
export interface BodyLimits {
  events: number;
  other: number;
}

export interface HttpServerOptions {
  bodyLimits: BodyLimits;
  /** Deadlines for slow clients (config server.*TimeoutMs). */
  headTimeoutMs: number;
  bodyTimeoutMs: number;
  idleTimeoutMs: number;
  /** Load balancers whose PROXY protocol header opens each of their connections. */
  proxyProtocolFrom: readonly string[];
  /** Requests, once read (the router). */
  dispatch(connection: HttpConnection, head: RequestHead, body: Buffer): void;
  maxHeadBytes?: number;
  maxFields?: number;
  lingerMs?: number;
}

/**
 * The service's HTTP/1.1 server: a TCP listener whose connections read
 * requests with the strict parser and hand them to the router on this thread
 * (src/http/connection.ts). One coarse clock and one sweep a second serve
 * every connection's deadlines, cheaper than a timer per socket, which Node
 * re-arms on every read and write.
 */
export class HttpServer implements ConnectionHost {
  readonly limits: ParserLimits;
  readonly timings: ConnectionTimings;
  private server: Server | null = null;
  private readonly connections = new Set<HttpConnection>();
  private sweeper: NodeJS.Timeout | null = null;
  /** The coarse clock the connections stamp their traffic with (ms, advanced by the sweep). */
  private clock = Date.now();
  private readonly trusted: NetworkSet | null;
  /** Ends the drain under way (null when none). */
  private drainEnd: (() => void) | null = null;

  private readonly options: HttpServerOptions;
  constructor(options: HttpServerOptions) {
    this.options = options;
    const { events, other } = options.bodyLimits;
    this.limits = {
      maxHeadBytes: options.maxHeadBytes ?? MAX_HEAD_BYTES,
      maxFields: options.maxFields ?? MAX_HEADER_FIELDS,
      bodyLimit: (target) => (target.startsWith('/events/') ? events : other),
    };
    this.timings = {
      now: () => this.clock,
      stamp: () => (this.clock = Date.now()),
      headTimeoutMs: options.headTimeoutMs,
      bodyTimeoutMs: options.bodyTimeoutMs,
      idleTimeoutMs: options.idleTimeoutMs,
      lingerMs: options.lingerMs ?? LINGER_MS,
    };
    this.trusted = options.proxyProtocolFrom.length > 0 ? NetworkSet.parse(options.proxyProtocolFrom) : null;
  }

  dispatch(connection: HttpConnection, head: RequestHead, body: Buffer): void {
    this.options.dispatch(connection, head, body);
  }

  proxyFrom(peer: string): boolean {
    return this.trusted !== null && this.trusted.has(peer);
  }

  /**
   * Listens on host:port; resolves with the port bound. `reusePort`: several
   * threads bind the same port (SO_REUSEPORT) and the kernel spreads new
   * connections over them.
   */
  listen(host: string, port: number, reusePort = false): Promise<number> {
    // allowHalfOpen: a client may send FIN after its last request and still read the answers.
    const server = createServer({ noDelay: true, allowHalfOpen: true }, (socket) => this.accept(socket));
    this.server = server;
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen({ host, port, reusePort }, () => {
        server.off('error', reject);
        const address = server.address();
        resolve(typeof address === 'object' && address ? address.port : port);
      });
    });
  }

  /** Stops accepting; open connections finish their exchanges. */
  close(): void {
    this.server?.close();
    this.server = null;
  }

  /**
   * After close(): sweeps often, ends connections that sit idle for `idleMs`
   * and resolves once none is left open, or at `deadline`. Busy connections
   * end with their next answer (`connection: close`). Closing only
   * connections that have been idle a while keeps small the window in which
   * a client reuses one just as it is closed (a request that would be cut off).
   */
  drain(idleMs: number, deadline: number): Promise<void> {
    return new Promise((resolve) => {
      // A drain begun while another runs ends the first (its awaiter goes on), as does destroyAll():
      // whoever awaits a drain is never left waiting on an interval someone else cleared.
      this.drainEnd?.();
      if (this.sweeper) clearInterval(this.sweeper);
      // The connections' last activity is stamped with the coarse clock, up to a sweep (1 s)
      // old: measured from it alone, a connection a client used a few ms ago could look idle
      // for 500 ms and be closed just as the client sends its next request on it. Idle time
      // counts from the drain's start at the earliest; from here on the clock ticks every 25 ms.
      const began = Date.now();
      const check = () => {
        this.clock = Date.now();
        let open = 0;
        for (const connection of this.connections) {
          // The slow-client deadlines still run: a slowloris would otherwise hold the drain to its deadline.
          connection.sweep(this.clock);
          connection.closeIfIdle(this.clock, idleMs, began);
          if (connection.open) open++;
        }
        if (open > 0 && this.clock < deadline) return;
        end();
      };
      const end = () => {
        if (this.drainEnd !== end) return;
        this.drainEnd = null;
        if (this.sweeper) clearInterval(this.sweeper);
        this.sweeper = setInterval(() => this.sweep(), SWEEP_MS).unref();
        resolve();
      };
      this.drainEnd = end;
      // Not unref'd, unlike the sweep: the drain ends by its deadline, and whoever awaits it (the
      // node's shutdown, which then closes the backends) must go on even when these sockets were
      // the last thing keeping the process alive; unref'd, the process exited mid-await.
      this.sweeper = setInterval(check, DRAIN_SWEEP_MS);
      check();
    });
  }

  /** Ends every connection at once (after the drain). */
  destroyAll(): void {
    this.drainEnd?.();
    for (const connection of this.connections) connection.destroy();
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = null;
  }

  /** Connections open now (metrics, tests). */
  get connectionCount(): number {
    return this.connections.size;
  }

  private accept(socket: Socket): void {
    this.clock = Date.now();
    const connection = new HttpConnection(socket, this, (c) => this.connections.delete(c));
    this.connections.add(connection);
    this.sweeper ??= setInterval(() => this.sweep(), SWEEP_MS).unref();
  }

  private sweep(): void {
    this.clock = Date.now();
    for (const connection of this.connections) connection.sweep(this.clock);
  }
}
