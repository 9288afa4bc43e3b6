import type { Config } from '../config/schema.js';
import type { Router } from './router.js';
import { HttpServer } from './server.js';

/**
 * While draining, a kept-alive connection idle this long is closed. A client
 * that sends on it at that very moment would see its request cut off
 * (HTTP/1.1's keep-alive race); one that is busy never sits this long, and
 * gets `connection: close` on its next answer instead.
 */
const DRAIN_IDLE_MS = 500;

export interface PublicListener {
  port: number;
  /** Stops accepting connections. */
  close(): void;
  /**
   * After close(): waits until the open connections have ended (busy ones
   * with their next answer, idle ones closed by the listener), or `deadline`.
   */
  drainConnections(deadline: number): Promise<void>;
  /** Ends connections still open (after the drain). */
  destroyConnections(): void;
}

/** The `server` settings the listener reads. */
export type ListenSettings = Pick<
  Config['server'],
  'host' | 'port' | 'maxBodyBytes' | 'maxManagementBodyBytes' | 'proxyProtocolFrom' | 'headTimeoutMs' | 'bodyTimeoutMs' | 'idleTimeoutMs'
>;

/**
 * Opens the service's HTTP port for `router`. `reusePort`: a threaded node's
 * threads each listen on the same port (src/node/threads/), and the kernel spreads
 * new connections over them; a single-threaded node does not set it, so a
 * second process started on a busy port fails instead of sharing it.
 */
export async function listenPublic(router: Router, server: Readonly<ListenSettings>, reusePort = false): Promise<PublicListener> {
  const http = new HttpServer({
    bodyLimits: { events: server.maxBodyBytes, other: server.maxManagementBodyBytes },
    headTimeoutMs: server.headTimeoutMs,
    bodyTimeoutMs: server.bodyTimeoutMs,
    idleTimeoutMs: server.idleTimeoutMs,
    proxyProtocolFrom: server.proxyProtocolFrom,
    dispatch: (connection, head, body) => router.dispatch(connection, head, body),
  });
  const port = await http.listen(server.host, server.port, reusePort);
  return {
    port,
    close: () => http.close(),
    drainConnections: (deadline) => http.drain(DRAIN_IDLE_MS, deadline),
    destroyConnections: () => http.destroyAll(),
  };
}
