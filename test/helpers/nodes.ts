import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Test } from 'tap';
import { loadConfig } from '../../src/config/load-config.js';
import type { Config } from '../../src/config/schema.js';
import { createLogger } from '../../src/observability/logger.js';
import { startNode, type RunningNode } from '../../src/node/node.js';
import { connectDatabase } from '../../src/storage/db.js';
import { migrate } from '../../src/storage/migrate.js';
import { bootstrap, type BootstrapResult } from '../../src/api/setup/bootstrap.js';
import { ApiClient } from './api-client.js';
import { backendConfig, backendEnv, type Backends } from './backends.js';

/** Creates the schema and a license/workspace/keys in the test database. */
export async function bootstrapDatabase(databaseUrl: string): Promise<BootstrapResult> {
  const sql = connectDatabase(databaseUrl, 1);
  try {
    await migrate(sql);
    return await bootstrap(sql, 'owner@example.test');
  } finally {
    await sql.end();
  }
}

/** Starts a streamgate node in this process; it stops when the test ends. */
export async function startTestNode(t: Test, backends: Backends, extra: Record<string, unknown> = {}): Promise<RunningNode> {
  const config = loadConfig({}, backendConfig(backends, extra));
  const node = await startNode(config, createLogger(config.log.level));
  t.teardown(() => node.stop());
  return node;
}

/**
 * Starts a node that is expected to refuse its start: the error it failed
 * with, or null when it started (then it is stopped at once).
 */
export async function startFailure(config: Config): Promise<Error | null> {
  return startNode(config, createLogger('silent')).then(
    async (node) => {
      await node.stop();
      return null;
    },
    (err: Error) => err,
  );
}

export function clientFor(port: number, creds: BootstrapResult): ApiClient {
  return new ApiClient(`http://127.0.0.1:${port}`, creds);
}

const CLI = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));

/** A streamgate child process (built dist/), for crash and multi-process tests. */
export class ChildNode {
  readonly child: ChildProcess;
  readonly port: number;
  constructor(
    child: ChildProcess,
    port: number,
  ) {
    this.child = child;
    this.port = port;
  }

  async waitReady(timeoutMs = 60_000): Promise<void> {
    const until = Date.now() + timeoutMs;
    while (Date.now() < until) {
      if (this.child.exitCode !== null) throw new Error(`streamgate exited with ${this.child.exitCode}`);
      try {
        const res = await fetch(`http://127.0.0.1:${this.port}/readyz`);
        if (res.status === 200) return;
      } catch {
        // not listening yet
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error('streamgate did not become ready');
  }

  kill(signal: NodeJS.Signals): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return Promise.resolve();
    return new Promise((resolve) => {
      this.child.once('exit', () => resolve());
      this.child.kill(signal);
    });
  }
}

export async function spawnNode(t: Test, backends: Backends, port: number, extraEnv: Record<string, string> = {}): Promise<ChildNode> {
  const child = spawn(process.execPath, [CLI, 'start'], {
    // One thread unless the test asks for more (server.threads defaults to every core).
    env: { ...process.env, ...backendEnv(backends, port), STREAMGATE_THREADS: '1', ...extraEnv },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const node = new ChildNode(child, port);
  t.teardown(() => node.kill('SIGKILL'));
  await node.waitReady();
  return node;
}

/** A free TCP port on loopback (child processes need to know theirs in advance). */
export async function freePort(): Promise<number> {
  const net = await import('node:net');
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
    srv.on('error', reject);
  });
}
