import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import uWS from 'uWebSockets.js';
import type { Config } from '../config/schema.js';
import type { Logger } from '../observability/logger.js';
import { Worker } from 'node:worker_threads';

// Under the test runner the sources run as .ts; built, as .js.
// STREAMGATE_GUARD_WORKER (an absolute path) swaps in another relay with the
// same worker protocol: bench/ingress-modes.mjs uses it to run the previous
// header guard against this one in the same run. Not a deployment setting.
const GUARD_WORKER = process.env.STREAMGATE_GUARD_WORKER
  ? pathToFileURL(process.env.STREAMGATE_GUARD_WORKER)
  : new URL(import.meta.url.endsWith('.ts') ? '../workers/header-guard-worker.ts' : '../workers/header-guard-worker.js', import.meta.url);

/**
 * While draining, a kept-alive connection idle this long is closed by the
 * guard. A client that sends on it at that very moment would see its request
 * cut off (HTTP/1.1's keep-alive race); one that is busy never sits this long,
 * and gets `connection: close` on its next answer instead.
 */
const DRAIN_IDLE_MS = 500;

/** Largest request head the header guard buffers (request line and headers). */
export const GUARD_MAX_HEAD_BYTES = 16_384;

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
  /** Test hook: ends the guard thread as a crash would (it is started again). */
  __terminateGuard?(): Promise<void>;
  /**
   * With the header guard: the private folder of uWS's socket, where a
   * threaded node's other threads put theirs (src/threads/).
   */
  privateDir?: string;
  /** With the header guard: relay to these threads' uWS sockets too, in turn with this one's. */
  setThreadUpstreams?(paths: readonly string[]): void;
}

function listenUws(app: uWS.TemplatedApp, host: string, port: number): Promise<uWS.us_listen_socket> {
  return new Promise((resolve, reject) => {
    app.listen(host, port, (token) => (token ? resolve(token) : reject(new Error(`cannot listen on ${host}:${port}`))));
  });
}

/**
 * Opens the service's HTTP port. Without the header guard uWS listens on it
 * directly. With it (server.headerGuard), uWS listens on a Unix socket in a
 * private temporary folder and the guard owns the public port.
 */
export async function listenPublic(app: uWS.TemplatedApp, server: Readonly<Omit<Config['server'], 'threads'>>, log: Logger): Promise<PublicListener> {
  if (!server.headerGuard) {
    const token = await listenUws(app, server.host, server.port);
    return {
      port: uWS.us_socket_local_port(token as unknown as uWS.us_socket),
      close: () => uWS.us_listen_socket_close(token),
      // uWS does not show its idle connections: answers carry `connection: close`
      // while the node closes, idle ones end with the process (the guard does better).
      drainConnections: async () => {},
      destroyConnections: () => {},
    };
  }
  // The guard runs on its own thread (src/workers/header-guard-worker.ts).
  // mkdtemp makes the folder 0700: only this user can reach uWS behind the guard
  // (a PROXY header from anyone else would let them pick their own address).
  const dir = mkdtempSync(join(tmpdir(), 'streamgate-'));
  const path = join(dir, `uws-${randomBytes(4).toString('hex')}.sock`);
  const token = await new Promise<uWS.us_listen_socket>((resolve, reject) => {
    app.listen_unix((t) => (t ? resolve(t) : reject(new Error(`cannot listen on ${path}`))), path);
  });
  const bodyLimits = { events: server.maxBodyBytes, other: server.maxManagementBodyBytes };
  let stopping = false;
  let guard: Worker;
  let upstreams: string[] = [path];
  /** Starts a guard thread on `port`; resolves with the port it bound. */
  const startGuard = async (port: number): Promise<number> => {
    const worker = new Worker(GUARD_WORKER, {
      workerData: { host: server.host, port, upstreamPath: path, maxHeadBytes: GUARD_MAX_HEAD_BYTES, bodyLimits },
    });
    guard = worker;
    // A guard started again relays to every thread, not only this one.
    if (upstreams.length > 1) worker.postMessage({ type: 'upstreams', paths: upstreams });
    worker.on('error', (err) => log.error({ err }, 'header guard thread failed'));
    const bound = await new Promise<number>((resolve, reject) => {
      worker.once('message', (msg: { type: string; port?: number; message?: string }) =>
        msg.type === 'listening' ? resolve(msg.port!) : reject(new Error(`header guard: ${msg.message}`)),
      );
      worker.once('exit', () => reject(new Error('header guard thread exited before listening')));
    });
    // A guard thread that dies (a bug in the relay) would leave the node up but
    // unreachable: start another on the same port.
    worker.once('exit', (code) => {
      if (stopping) return;
      log.error({ code }, 'header guard thread exited; starting another');
      startGuard(bound).catch((err: unknown) => log.fatal({ err }, 'header guard could not be restarted: the port is closed'));
    });
    return bound;
  };
  let port: number;
  try {
    port = await startGuard(server.port);
  } catch (err) {
    stopping = true;
    await guard!.terminate();
    uWS.us_listen_socket_close(token);
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    port,
    privateDir: dir,
    setThreadUpstreams: (paths) => {
      upstreams = [path, ...paths];
      guard.postMessage({ type: 'upstreams', paths: upstreams });
    },
    close: () => {
      stopping = true;
      guard.postMessage({ type: 'close' });
      uWS.us_listen_socket_close(token);
      rmSync(dir, { recursive: true, force: true });
    },
    drainConnections: (deadline) =>
      new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          guard.off('message', onMessage);
          guard.off('exit', done);
          resolve();
        };
        const onMessage = (msg: { type: string }) => {
          if (msg.type === 'drained') done();
        };
        const timer = setTimeout(done, Math.max(0, deadline - Date.now()));
        guard.on('message', onMessage);
        guard.once('exit', done);
        guard.postMessage({ type: 'drain', idleMs: DRAIN_IDLE_MS });
      }),
    __terminateGuard: async () => {
      await guard.terminate();
    },
    destroyConnections: () => {
      stopping = true;
      guard.postMessage({ type: 'destroy' });
      // Open keep-alive sockets would hold the thread (and the process) up.
      void guard.terminate();
    },
  };
}
