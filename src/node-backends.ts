import { connect } from 'node:net';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Config } from './config/schema.js';
import type { Logger } from './observability/logger.js';
import type { CacheStore } from './cache/cache-store.js';
import { MemoryCacheStore } from './cache/memory-cache-store.js';
import { RedisCacheStore } from './cache/redis-cache-store.js';
import type { EventLogReader, EventLogWriter, FoundRecord } from './event-log/event-log.js';
import { Admin } from '@platformatic/kafka';
import { ensureTopic } from './event-log/kafka/kafka-topic.js';
import { closeClient, kafkaClientOptions } from './event-log/kafka/kafka-options.js';
import { explainKafkaFailure, kafkaSecurityOptions, KafkaUnavailableError } from './event-log/kafka/kafka-security.js';
import { KafkaWriter } from './event-log/kafka/kafka-writer.js';
import { KafkaReader } from './event-log/kafka/kafka-reader.js';
import { KafkaLookup } from './event-log/kafka/kafka-lookup.js';
import { GroupLiveness } from './event-log/kafka/group-liveness.js';
import { findEmbeddedSince } from './event-log/embedded/embedded-find.js';
import { embeddedStore } from './event-log/embedded/embedded-store.js';
import { EmbeddedWriter } from './event-log/embedded/embedded-writer.js';
import { EmbeddedReader } from './event-log/embedded/embedded-reader.js';
import { startEmbeddedPostgres } from './storage/embedded-postgres.js';

/** The event log a node writes to and reads from, whichever adapter runs. */
export interface EventLogBackend {
  kind: 'kafka' | 'embedded';
  openWriter(): Promise<EventLogWriter>;
  openReader(log: Logger): EventLogReader;
  /**
   * The record bytes at one offset, for redelivering an event whose delivery
   * is long over (the log holds the only copy of its body); null once
   * retention dropped it.
   */
  readAt(partition: number, offset: bigint): Promise<Buffer | null>;
  /**
   * The first record that `match`es among those written from `sinceMs` to
   * `sinceMs + windowMs` (any partition), or null: for showing an event that
   * delivery has not consumed yet.
   */
  findSince(sinceMs: number, windowMs: number, match: (value: Buffer) => boolean): Promise<FoundRecord | null>;
  /**
   * Gets the log ready to write and read (Kafka: the topic exists and every
   * partition has a leader). Throws KafkaUnavailableError; whether waiting
   * can help is isRetriableKafkaError's call on it.
   */
  prepare(): Promise<void>;
  /** Readiness: asks the broker for the topic's metadata (Kafka); absent for the embedded log. */
  probe?(): Promise<Record<string, unknown>>;
  /** Closes what the backend keeps open for lookups. */
  close(): Promise<void>;
}

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
    eventLog = embedded ? embeddedLog(config) : await kafkaLog(config, log, config.redis.url ? cache : null);
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

function embeddedLog(config: Readonly<Config>): EventLogBackend {
  const dir = join(resolve(config.dataDir), 'log');
  const { partitions, batchSize, pollMs, retentionHours } = config.embeddedLog;
  return {
    kind: 'embedded',
    prepare: async () => {},
    close: async () => {},
    openWriter: async () => new EmbeddedWriter(embeddedStore(dir, partitions)),
    openReader: (log) =>
      new EmbeddedReader(embeddedStore(dir, partitions), { group: config.kafka.groupId, batchSize, pollMs, retentionMs: retentionHours * 3_600_000 }, log),
    readAt: async (partition, offset) => {
      const store = embeddedStore(dir, partitions);
      try {
        return store.events.get([partition, Number(offset)]) ?? null;
      } finally {
        await store.release();
      }
    },
    findSince: async (sinceMs, windowMs, match) => {
      const store = embeddedStore(dir, partitions);
      try {
        return findEmbeddedSince(store, sinceMs, windowMs, match);
      } finally {
        await store.release();
      }
    },
  };
}

async function kafkaLog(config: Readonly<Config>, log: Logger, sharedCache: CacheStore | null): Promise<EventLogBackend> {
  // Files and the token provider are read here: a wrong path stops the start at once (ConfigError).
  const security = await kafkaSecurityOptions(config.kafka);
  const unavailable = (err: unknown) => new KafkaUnavailableError(explainKafkaFailure(err, config.kafka.brokers, config.kafka), { cause: err });
  // One lookup client per node, made on first use: most nodes never look anything up.
  let lookup: KafkaLookup | null = null;
  const lookups = () => (lookup ??= new KafkaLookup(config.kafka, security));
  // The readiness probe's client: no retries of its own, the next round asks again.
  let admin: Admin | null = null;
  return {
    kind: 'kafka',
    prepare: async () => {
      try {
        // Short: a broker still away is waited out by the caller, which backs off and says so on /readyz.
        await ensureTopic(config, security, 1_000);
      } catch (err) {
        // A refused login, an untrusted certificate, no broker: one line naming the broker and the cause.
        throw unavailable(err);
      }
    },
    probe: async () => {
      admin ??= new Admin(kafkaClientOptions(config.kafka, security, 0));
      let meta;
      try {
        meta = await admin.metadata({ topics: [config.kafka.topic], forceUpdate: true });
      } catch (err) {
        throw new Error(explainKafkaFailure(err, config.kafka.brokers, config.kafka));
      }
      const partitions = meta.topics.get(config.kafka.topic)?.partitions ?? [];
      const leaderless = partitions.filter((p) => p.leader < 0).length;
      if (partitions.length === 0 || leaderless > 0) {
        throw new Error(`topic ${config.kafka.topic}: ${leaderless} of ${partitions.length} partitions without a leader`);
      }
      return { brokers: meta.brokers.size, partitions: partitions.length };
    },
    openWriter: async () => {
      const writer = new KafkaWriter(config.kafka, log, security);
      try {
        await writer.connect();
      } catch (err) {
        await writer.close().catch(() => {});
        throw unavailable(err);
      }
      return writer;
    },
    openReader: (readerLog) => new KafkaReader(config.kafka, readerLog, security, sharedCache ? new GroupLiveness(config.kafka, sharedCache, readerLog, security) : null),
    readAt: (partition, offset) => lookups().readAt(partition, offset),
    findSince: (sinceMs, windowMs, match) => lookups().findSince(sinceMs, windowMs, match),
    close: async () => {
      await lookup?.close();
      if (admin) await closeClient(admin);
    },
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
