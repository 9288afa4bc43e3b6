import { createServer, connect, type Server, type Socket } from 'node:net';
import { isIPv4, isIPv6 } from 'node:net';
import { addressBytes } from '../net/cidr.js';
import { UWS_VERBATIM_FIELDS } from './front/canonical-head.js';
import { FrontConnection, type FrontTimings } from './front/front-connection.js';
import type { ParserLimits } from './front/request-parser.js';

/** How long a refused connection keeps draining the client's bytes before it is dropped. */
const LINGER_MS = 5_000;
/** uWS's own HTTP idle timeout, kept by the front for the connections it owns. */
const IDLE_MS = 10_000;
const SWEEP_MS = 1_000;
/** The sweep's period while draining, when connections are waited for. */
const DRAIN_SWEEP_MS = 25;
/** Header fields one request may have (RFC 9110 sets no number; uWS 20.30 takes 48, the rest is packed). */
export const MAX_HEADER_FIELDS = 100;

/** Body limits by route family: server.maxBodyBytes for ingress, server.maxManagementBodyBytes for the rest. */
export interface BodyLimits {
  events: number;
  other: number;
}

const PROXY_V2_SIGNATURE = Buffer.from([0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a]);

/**
 * A PROXY protocol v2 header (the binary form HAProxy defined) naming the
 * client: uWS reads it and reports the address through
 * getProxiedRemoteAddress, so IP allowlists see the real client.
 */
export function proxyHeader(address: string, port: number, localAddress: string, localPort: number): Buffer {
  const v4 = isIPv4(address) && isIPv4(localAddress);
  const v6 = !v4 && isIPv6(address);
  if (!v4 && !v6) {
    // Unknown family: LOCAL command, no address (uWS then reports the socket's own peer).
    const local = Buffer.alloc(16);
    PROXY_V2_SIGNATURE.copy(local);
    local[12] = 0x20;
    return local;
  }
  const size = v4 ? 12 : 36;
  const buf = Buffer.alloc(16 + size);
  PROXY_V2_SIGNATURE.copy(buf);
  buf[12] = 0x21; // version 2, PROXY
  buf[13] = v4 ? 0x11 : 0x21; // TCP over IPv4 / IPv6
  buf.writeUInt16BE(size, 14);
  // The families were checked above; an address that still does not read stays zero.
  if (v4) {
    addressBytes(address)?.copy(buf, 16);
    addressBytes(localAddress)?.copy(buf, 20);
    buf.writeUInt16BE(port, 24);
    buf.writeUInt16BE(localPort, 26);
  } else {
    addressBytes(address)?.copy(buf, 16);
    // An IPv4 local address beside an IPv6 client goes as its IPv4-mapped form.
    addressBytes(isIPv6(localAddress) ? localAddress : `::ffff:${localAddress}`)?.copy(buf, 32);
    buf.writeUInt16BE(port, 48);
    buf.writeUInt16BE(localPort, 50);
  }
  return buf;
}

export interface HeaderGuardOptions {
  host: string;
  port: number;
  /** Where uWS listens (a private Unix socket path). */
  upstreamPath: string;
  maxHeadBytes: number;
  /** Body limits by route family (larger: 413 from the front). */
  bodyLimits: BodyLimits;
  /** Header fields per request (default MAX_HEADER_FIELDS). */
  maxFields?: number;
  idleMs?: number;
  lingerMs?: number;
}

/**
 * The public listener when `server.headerGuard` is on: the front of the node.
 * Every connection is read by a FrontConnection (strict parser, canonical
 * re-serialization, one request at a time to uWS); uWS listens on a private
 * Unix socket and only ever sees what the front wrote, beginning with one
 * PROXY v2 header per private connection that names the client. Costs a
 * second socket hop per request; see README.
 */
export class HeaderGuard {
  private server: Server | null = null;
  private readonly sockets = new Set<Socket>();
  private readonly connections = new Set<FrontConnection>();
  private sweeper: NodeJS.Timeout | null = null;
  /** The coarse clock the connections stamp their traffic with (ms, advanced by the sweep). */
  private clock = Date.now();
  private readonly limits: ParserLimits;
  private readonly timings: FrontTimings;
  /** Where uWS listens: the node's own socket, then one per extra node thread (src/threads/). */
  private upstreams: string[];
  private nextUpstream = 0;

  constructor(private readonly options: HeaderGuardOptions) {
    const { events, other } = options.bodyLimits;
    this.limits = {
      maxHeadBytes: options.maxHeadBytes,
      maxFields: options.maxFields ?? MAX_HEADER_FIELDS,
      maxVerbatimFields: UWS_VERBATIM_FIELDS,
      bodyLimit: (target) => (target.startsWith('/events/') ? events : other),
    };
    this.timings = { idleMs: options.idleMs ?? IDLE_MS, lingerMs: options.lingerMs ?? LINGER_MS, now: () => this.clock };
    this.upstreams = [options.upstreamPath];
  }

  /**
   * The uWS sockets to relay to, taken in turn by each private connection the
   * guard opens (a threaded node: one per thread). A thread that went away is
   * dropped here by its node; connections already open to it end with it.
   */
  setUpstreams(paths: readonly string[]): void {
    if (paths.length > 0) this.upstreams = [...paths];
  }

  listen(): Promise<number> {
    // allowHalfOpen: a client may send FIN after its last request and still read the answers.
    const server = createServer({ noDelay: true, allowHalfOpen: true }, (client) => this.accept(client));
    this.server = server;
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.options.port, this.options.host, () => {
        server.off('error', reject);
        const address = server.address();
        resolve(typeof address === 'object' && address ? address.port : this.options.port);
      });
    });
  }

  /** Stops accepting; open connections finish their exchanges (uWS answers them). */
  close(): void {
    this.server?.close();
    this.server = null;
  }

  /**
   * After close(): sweeps often, ends connections that sit idle for `idleMs`
   * and calls `onEmpty` once none is left open. Busy connections end with
   * their next answer. Closing only connections that have been idle a while
   * keeps small the window in which a client reuses one just as it is closed
   * (a request that would be cut off).
   */
  drain(idleMs: number, onEmpty: () => void): void {
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
        connection.closeIfIdle(this.clock, idleMs, began);
        if (connection.open) open++;
      }
      if (open > 0) return;
      if (this.sweeper) clearInterval(this.sweeper);
      this.sweeper = setInterval(() => this.sweep(), SWEEP_MS).unref();
      onEmpty();
    };
    this.sweeper = setInterval(check, DRAIN_SWEEP_MS).unref();
    check();
  }

  /** Ends every connection at once (after the drain). */
  destroyAll(): void {
    for (const socket of this.sockets) socket.destroy();
    if (this.sweeper) clearInterval(this.sweeper);
  }

  private accept(client: Socket): void {
    this.sockets.add(client);
    const open = () => {
      const socket = connect(this.upstreams[this.nextUpstream++ % this.upstreams.length]!);
      return { socket, preamble: proxyHeader(client.remoteAddress ?? '', client.remotePort ?? 0, client.localAddress ?? '', client.localPort ?? 0) };
    };
    const connection = new FrontConnection(client, this.limits, this.timings, open, () => {
      this.sockets.delete(client);
      this.connections.delete(connection);
    });
    this.connections.add(connection);
    this.sweeper ??= setInterval(() => this.sweep(), SWEEP_MS).unref();
  }

  /** Idle connections are found by one sweep a second, not a timer per socket. */
  private sweep(): void {
    this.clock = Date.now();
    for (const connection of this.connections) connection.sweep(this.clock);
  }
}
