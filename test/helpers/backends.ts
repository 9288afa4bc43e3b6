import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CacheStore } from '../../src/cache/cache-store.js';
import { MemoryCacheStore } from '../../src/cache/memory-cache-store.js';
import { RedisCacheStore } from '../../src/cache/redis-cache-store.js';
import type { Config } from '../../src/config/schema.js';
import type { EventLogWriter } from '../../src/event-log/event-log.js';
import { embeddedStore } from '../../src/event-log/embedded/embedded-store.js';
import { EmbeddedWriter } from '../../src/event-log/embedded/embedded-writer.js';
import { KafkaWriter } from '../../src/event-log/kafka/kafka-writer.js';
import { createLogger } from '../../src/observability/logger.js';
import postgres from 'postgres';
import type { Test } from 'tap';

/**
 * Every integration test gets its own database, Kafka topic, consumer group
 * and Redis key prefix, so test files can run side by side against the same
 * Postgres, Kafka and Redis without seeing each other's data.
 */
export const ADMIN_DATABASE_URL = process.env.TEST_ADMIN_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
export const KAFKA_BROKERS = process.env.KAFKA_BROKERS ?? '127.0.0.1:9092';

/**
 * Which backends the service-level tests run against (test/run.sh runs the
 * suite once per value): `kafka` = Kafka + Redis, `embedded` = the embedded
 * log + the in-process cache. Both use a fresh database on the machine's
 * PostgreSQL (the embedded PostgreSQL launcher has its own test).
 */
/** Partitions of the test log, Kafka topic or embedded log alike. */
export const TEST_PARTITIONS = 4;

export const TEST_BACKEND: 'kafka' | 'embedded' = process.env.STREAMGATE_TEST_BACKEND === 'embedded' ? 'embedded' : 'kafka';

export function uniqueSuffix(): string {
  return `${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
}

/** Creates an empty database for this test and drops it when the test ends. */
export async function freshDatabase(t: Test): Promise<string> {
  const name = `sg_test_${uniqueSuffix()}`;
  const admin = postgres(ADMIN_DATABASE_URL, { max: 1, onnotice: () => {} });
  await admin.unsafe(`CREATE DATABASE ${name}`);
  await admin.end();
  t.teardown(async () => {
    const sql = postgres(ADMIN_DATABASE_URL, { max: 1, onnotice: () => {} });
    await sql.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await sql.end();
  });
  const url = new URL(ADMIN_DATABASE_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

export interface Backends {
  databaseUrl: string;
  topic: string;
  groupId: string;
  redisPrefix: string;
  /** Working folder for embedded backends (removed at teardown). */
  dataDir: string;
}

export async function freshBackends(t: Test): Promise<Backends> {
  const suffix = uniqueSuffix();
  const topic = `sg-test-${suffix}`;
  // Registered first, so it runs last: after the nodes using the topic stopped.
  t.teardown(async () => {
    // A topic never created (a test that failed early) is fine.
    const { deleteTopic } = await import('./read-topic.js');
    await deleteTopic(topic);
  });
  const dataDir = mkdtempSync(join(tmpdir(), 'sg-test-data-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  return {
    dataDir,
    databaseUrl: await freshDatabase(t),
    topic,
    groupId: `sg-test-${suffix}`,
    redisPrefix: `sgtest:${suffix}:`,
  };
}

/** The config overrides that point a node at these backends. */
export function backendConfig(b: Backends, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const embedded = TEST_BACKEND === 'embedded';
  return {
    dataDir: b.dataDir,
    // The old drain budget: a test node's stop() waits for in-flight work at most this long.
    server: { port: 0, host: '127.0.0.1', shutdownTimeoutMs: 15_000 },
    database: { url: b.databaseUrl },
    redis: { url: embedded ? '' : REDIS_URL, keyPrefix: b.redisPrefix },
    kafka: { brokers: embedded ? [] : KAFKA_BROKERS.split(','), topic: b.topic, groupId: b.groupId, partitions: TEST_PARTITIONS },
    embeddedLog: { partitions: TEST_PARTITIONS, batchSize: 500, pollMs: 20 },
    // Retries every second (the default schedule starts at 5 s and grows to hours).
    delivery: {
      allowNetworks: ['127.0.0.0/8'],
      allowLoopbackInSingleNode: false,
      commitIntervalMs: 50,
      retry: { scheduleSeconds: [1], horizonSeconds: 3600, holdInMemoryMs: 1000 },
    },
    log: { level: process.env.TEST_LOG_LEVEL ?? 'silent' },
    ...extra,
  };
}

/** The environment that points a child `streamgate` process at these backends. */
export function backendEnv(b: Backends, port: number): Record<string, string> {
  const embedded = TEST_BACKEND === 'embedded';
  return {
    PORT: String(port),
    DATABASE_URL: b.databaseUrl,
    REDIS_URL: embedded ? '' : REDIS_URL,
    KAFKA_BROKERS: embedded ? '' : KAFKA_BROKERS,
    STREAMGATE_DATA_DIR: b.dataDir,
    STREAMGATE_REDIS_PREFIX: b.redisPrefix,
    STREAMGATE_KAFKA_TOPIC: b.topic,
    STREAMGATE_KAFKA_GROUP: b.groupId,
    STREAMGATE_ALLOW_NETWORKS: '127.0.0.0/8',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'warn',
  };
}

/**
 * The cache the test's nodes share: Redis under the test's prefix, or (embedded)
 * the process-wide in-memory store of that prefix, which in-process nodes use.
 */
export function testCache(b: Backends): CacheStore {
  return TEST_BACKEND === 'embedded'
    ? MemoryCacheStore.shared(b.redisPrefix)
    : new RedisCacheStore(REDIS_URL, b.redisPrefix, createLogger('silent'));
}

/** A writer to the test's event log, as ingress would write (close it after use). */
export async function testLogWriter(b: Backends, config: Readonly<Config>): Promise<EventLogWriter> {
  if (TEST_BACKEND === 'embedded') return new EmbeddedWriter(embeddedStore(join(b.dataDir, 'log'), TEST_PARTITIONS));
  const writer = new KafkaWriter(config.kafka, createLogger('silent'));
  await writer.connect();
  return writer;
}
