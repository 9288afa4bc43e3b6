import { randomBytes } from 'node:crypto';
import { Kafka, logLevel } from 'kafkajs';
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
}

export async function freshBackends(t: Test): Promise<Backends> {
  const suffix = uniqueSuffix();
  const topic = `sg-test-${suffix}`;
  // Registered first, so it runs last: after the nodes using the topic stopped.
  t.teardown(async () => {
    const admin = new Kafka({ brokers: KAFKA_BROKERS.split(','), logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
    try {
      await admin.deleteTopics({ topics: [topic] });
    } catch {
      // never created (a test that failed early): nothing to remove
    } finally {
      await admin.disconnect();
    }
  });
  return {
    databaseUrl: await freshDatabase(t),
    topic,
    groupId: `sg-test-${suffix}`,
    redisPrefix: `sgtest:${suffix}:`,
  };
}

/** The config overrides that point a node at these backends. */
export function backendConfig(b: Backends, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    server: { port: 0, host: '127.0.0.1' },
    database: { url: b.databaseUrl },
    redis: { url: REDIS_URL, keyPrefix: b.redisPrefix },
    kafka: { brokers: KAFKA_BROKERS.split(','), topic: b.topic, groupId: b.groupId, partitions: 4 },
    // Retries every second (the default schedule starts at 5 s and grows to hours).
    delivery: { allowNetworks: ['127.0.0.0/8'], commitIntervalMs: 50, retry: { scheduleSeconds: [1], horizonSeconds: 3600, holdInMemoryMs: 1000 } },
    log: { level: process.env.TEST_LOG_LEVEL ?? 'silent' },
    ...extra,
  };
}

/** The environment that points a child `streamgate` process at these backends. */
export function backendEnv(b: Backends, port: number): Record<string, string> {
  return {
    PORT: String(port),
    DATABASE_URL: b.databaseUrl,
    REDIS_URL,
    KAFKA_BROKERS,
    STREAMGATE_KAFKA_TOPIC: b.topic,
    STREAMGATE_KAFKA_GROUP: b.groupId,
    STREAMGATE_ALLOW_NETWORKS: '127.0.0.0/8',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'warn',
  };
}
