import { connect } from 'node:net';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Config } from '../config/schema.js';
import type { Logger } from '../observability/logger.js';
import type { CacheStore } from '../cache/cache-store.js';
import { MemoryCacheStore } from '../cache/memory-cache-store.js';
import { RedisCacheStore } from '../cache/redis-cache-store.js';
import type { EventLogBackend } from '../event-log/event-log.js';
import { openEventLog } from '../event-log/open-event-log.js';
import { startEmbeddedPostgres } from '../storage/embedded-postgres.js';

export interface NodeBackends {
  /** True when something runs embedded that only one node can use. */
  singleNode: boolean;
  databaseUrl: string;
  cache: CacheStore;
  eventLog: EventLogBackend;
  close(): Promise<void>;
}

/**
 * Picks each backend from configuration: Kafka, Postgres and Redis when
 * configured (a cluster), otherwise the embedded log, an embedded PostgreSQL
 * and the in-process cache (one machine, nothing to install). Connects to
 * nothing remote: the node's start waits for Kafka, Postgres and Redis
 * itself (node.ts), so it can listen and answer /readyz meanwhile. Throws
 * only what waiting cannot fix (a Kafka key file that cannot be read, an
 * embedded PostgreSQL that does not start).
 */
export async function openBackends(config: Readonly<Config>, log: Logger): Promise<NodeBackends> {
  const closers: Array<() => Promise<void>> = [];
  const database = await openDatabase(config, log);
  if (database.stop) closers.push(database.stop);

  const cache: CacheStore = config.redis.url
    ? new RedisCacheStore(config.redis.url, config.redis.keyPrefix, log, config.redis.commandTimeoutMs)
    : MemoryCacheStore.shared(config.redis.keyPrefix);
  closers.push(() => cache.close());

  const closeAll = async () => {
    for (const close of closers.reverse()) await close();
  };

  const embedded = config.kafka.brokers.length === 0;
  if (!config.redis.url && !embedded) {
    log.warn('Kafka is configured but Redis is not: the in-process cache keeps this node from sharing nonces, idempotency keys and invalidations with others');
  }
  let eventLog: EventLogBackend;
  try {
    // Liveness marks need a cache every node shares: Redis, not the in-process one.
    eventLog = await openEventLog(config, log, config.redis.url ? cache : null);
    closers.push(() => eventLog.close());
  } catch (err) {
    // Nothing may stay open when start fails: the caller has no handle to close.
    await closeAll();
    throw err;
  }
  return {
    singleNode: embedded || !config.redis.url,
    databaseUrl: database.url,
    cache,
    eventLog,
    close: closeAll,
  };
}

/**
 * DATABASE_URL when set; otherwise the embedded PostgreSQL under dataDir. When
 * another streamgate process of this folder already runs it, use that one.
 */
export async function openDatabase(config: Readonly<Config>, log: Logger): Promise<{ url: string; stop?: () => Promise<void> }> {
  if (config.database.url) return { url: config.database.url };
  const dir = resolve(config.dataDir);
  const port = config.database.embeddedPort;
  const passwordFile = join(dir, 'pg-password');
  if (existsSync(passwordFile) && (await listening(port))) {
    const password = readFileSync(passwordFile, 'utf8').trim();
    return { url: `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/streamgate` };
  }
  const db = await startEmbeddedPostgres(dir, port, log);
  return { url: db.url, stop: db.stop };
}

function listening(port: number): Promise<boolean> {
  return new Promise((resolvePromise) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolvePromise(true);
    });
    socket.once('error', () => resolvePromise(false));
  });
}
