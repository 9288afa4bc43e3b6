import { connect } from 'node:net';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Kafka } from 'kafkajs';
import type { Config } from './config/schema.js';
import type { Logger } from './observability/logger.js';
import type { CacheStore } from './cache/cache-store.js';
import { MemoryCacheStore } from './cache/memory-cache-store.js';
import { RedisCacheStore } from './cache/redis-cache-store.js';
import type { EventLogReader, EventLogWriter, FoundRecord } from './log/event-log.js';
import { createKafka, ensureTopic } from './log/kafka-client.js';
import { KafkaWriter } from './log/kafka-writer.js';
import { KafkaReader } from './log/kafka-reader.js';
import { fetchRecordAt } from './log/kafka-fetch.js';
import { findRecordSince } from './log/kafka-find.js';
import { findEmbeddedSince } from './log/embedded-find.js';
import { embeddedStore } from './log/embedded-store.js';
import { EmbeddedWriter } from './log/embedded-writer.js';
import { EmbeddedReader } from './log/embedded-reader.js';
import { startEmbeddedPostgres } from './storage/embedded-postgres.js';

/** The event log a node writes to and reads from, whichever adapter runs. */
export interface EventLogBackend {
  kind: 'kafka' | 'embedded';
  openWriter(): Promise<EventLogWriter>;
  openReader(partitionsConcurrently: number, log: Logger): EventLogReader;
  /**
   * The record bytes at one offset, for redelivering an event whose delivery
   * is long over (the log holds the only copy of its body); null once
   * retention dropped it.
   */
  readAt(partition: number, offset: bigint): Promise<Buffer | null>;
  /**
   * The first record that `match`es among those written from `sinceMs` to
   * `sinceMs + windowMs` (any partition), or null: for showing an event that
   * delivery has not consumed yet. Slow on Kafka (a consumer group join).
   */
  findSince(sinceMs: number, windowMs: number, match: (value: Buffer) => boolean): Promise<FoundRecord | null>;
  /** The Kafka client, when Kafka is the log (for tools that need it). */
  kafka: Kafka | null;
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
 * and the in-process cache (one machine, nothing to install).
 */
export async function openBackends(config: Readonly<Config>, log: Logger): Promise<NodeBackends> {
  const closers: Array<() => Promise<void>> = [];
  const database = await openDatabase(config, log);
  if (database.stop) closers.push(database.stop);

  const cache: CacheStore = config.redis.url
    ? new RedisCacheStore(config.redis.url, config.redis.keyPrefix, log)
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
    eventLog = embedded ? embeddedLog(config) : await kafkaLog(config, log);
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
    kafka: null,
    openWriter: async () => new EmbeddedWriter(embeddedStore(dir, partitions)),
    openReader: (_concurrency, log) =>
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

async function kafkaLog(config: Readonly<Config>, log: Logger): Promise<EventLogBackend> {
  const kafka = createKafka(config, log);
  await ensureTopic(kafka, config);
  return {
    kind: 'kafka',
    kafka,
    openWriter: async () => {
      const writer = new KafkaWriter(config.kafka, log);
      await writer.connect();
      return writer;
    },
    openReader: (concurrency, readerLog) => new KafkaReader(kafka, config.kafka, concurrency, readerLog),
    readAt: (partition, offset) => fetchRecordAt(kafka, config.kafka.topic, partition, offset),
    findSince: (sinceMs, windowMs, match) => findRecordSince(kafka, config.kafka.topic, sinceMs, windowMs, match),
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
