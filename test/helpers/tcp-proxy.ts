import { createServer, connect, type Server, type Socket } from 'node:net';
import type { Test } from 'tap';

/** Copies bytes between a client and its upstream connection (the default: both ways unchanged). */
export type Relay = (client: Socket, upstream: Socket, proxyPort: number) => void;

export type CutMode =
  /** The port stops listening and open connections are reset: clients see ECONNREFUSED / ECONNRESET at once. */
  | 'refuse'
  /** Connections stay open and new ones are accepted, but no byte passes either way: clients see only silence (a dead host, a partition). */
  | 'blackhole';

/**
 * A TCP proxy on a loopback port in front of a real service (Postgres, Redis,
 * a Kafka broker), so a test can cut one node's link to that service without
 * stopping the service the other test files share.
 */
export class TcpProxy {
  private server: Server | null = null;
  private readonly pairs = new Set<{ client: Socket; upstream: Socket }>();
  private held = new Set<Socket>();
  private mode: 'open' | CutMode = 'open';
  port = 0;

  private readonly targetHost: string;
  private readonly targetPort: number;
  private readonly relay: Relay | null;
  private constructor(
    targetHost: string,
    targetPort: number,
    relay: Relay | null,
  ) {
    this.targetHost = targetHost;
    this.targetPort = targetPort;
    this.relay = relay;
  }

  /**
   * Starts a proxy to host:port on a free loopback port; it closes when the test ends.
   * `relay` replaces the plain byte copy both ways (kafka-proxy.ts rewrites what the broker says).
   */
  static async start(t: Test, target: string, relay: Relay | null = null): Promise<TcpProxy> {
    const at = target.lastIndexOf(':');
    const proxy = new TcpProxy(target.slice(0, at), Number(target.slice(at + 1)), relay);
    await proxy.listen(0);
    t.teardown(() => proxy.close());
    return proxy;
  }

  /** host:port of the proxy, for a broker list or as a URL's authority. */
  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  /** `url` with its host and port replaced by the proxy's (for DATABASE_URL / REDIS_URL). */
  rewrite(url: string): string {
    const u = new URL(url);
    u.hostname = '127.0.0.1';
    u.port = String(this.port);
    return u.toString();
  }

  /** Cuts the link: see CutMode. */
  async cut(mode: CutMode = 'refuse'): Promise<void> {
    this.mode = mode;
    if (mode === 'refuse') {
      for (const { client, upstream } of this.pairs) {
        client.resetAndDestroy();
        upstream.destroy();
      }
      this.pairs.clear();
      await this.stopListening();
    } else {
      for (const { client, upstream } of this.pairs) {
        client.pause();
        upstream.pause();
      }
    }
  }

  /** Lets traffic through again (on the same port). */
  async restore(): Promise<void> {
    const was = this.mode;
    this.mode = 'open';
    if (was === 'refuse') {
      await this.listen(this.port);
      return;
    }
    // Silenced connections stay dead (their bytes were dropped mid-stream); held ones are closed so clients reconnect.
    this.dropConnections();
  }

  async close(): Promise<void> {
    this.mode = 'refuse';
    this.dropConnections();
    await this.stopListening();
  }

  private dropConnections(): void {
    for (const { client, upstream } of this.pairs) {
      client.destroy();
      upstream.destroy();
    }
    this.pairs.clear();
    for (const socket of this.held) socket.destroy();
    this.held.clear();
  }

  private listen(port: number): Promise<void> {
    const server = createServer((client) => this.accept(client));
    this.server = server;
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        this.port = (server.address() as { port: number }).port;
        resolve();
      });
    });
  }

  private stopListening(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (!server) return Promise.resolve();
    return new Promise((resolve) => server.close(() => resolve()));
  }

  private accept(client: Socket): void {
    client.on('error', () => {});
    if (this.mode === 'blackhole') {
      // Accepted and never answered: what a client sees from a host that went silent.
      client.pause();
      this.held.add(client);
      client.once('close', () => this.held.delete(client));
      return;
    }
    const upstream = connect({ host: this.targetHost, port: this.targetPort });
    upstream.on('error', () => client.destroy());
    const pair = { client, upstream };
    this.pairs.add(pair);
    const drop = () => {
      this.pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.once('close', drop);
    upstream.once('close', drop);
    if (this.relay) {
      this.relay(client, upstream, this.port);
      return;
    }
    client.pipe(upstream);
    upstream.pipe(client);
  }
}
