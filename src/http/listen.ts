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

/** Largest request head the header guard buffers (request line and headers). */
export const GUARD_MAX_HEAD_BYTES = 16_384;

export interface PublicListener {
  port: number;
  /** Stops accepting connections. */
  close(): void;
  /** Ends connections still open (after the drain). */
  destroyConnections(): void;
  /** Test hook: ends the guard thread as a crash would (it is started again). */
  __terminateGuard?(): Promise<void>;
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
export async function listenPublic(app: uWS.TemplatedApp, server: Readonly<Config['server']>, log: Logger): Promise<PublicListener> {
  if (!server.headerGuard) {
    const token = await listenUws(app, server.host, server.port);
    return {
      port: uWS.us_socket_local_port(token as unknown as uWS.us_socket),
      close: () => uWS.us_listen_socket_close(token),
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
  /** Starts a guard thread on `port`; resolves with the port it bound. */
  const startGuard = async (port: number): Promise<number> => {
    const worker = new Worker(GUARD_WORKER, {
      workerData: { host: server.host, port, upstreamPath: path, maxHeadBytes: GUARD_MAX_HEAD_BYTES, bodyLimits },
    });
    guard = worker;
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
    close: () => {
      stopping = true;
      guard.postMessage({ type: 'close' });
      uWS.us_listen_socket_close(token);
      rmSync(dir, { recursive: true, force: true });
    },
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
