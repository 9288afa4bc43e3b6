import type { Config } from '../config/schema.js';
import type { Logger } from '../observability/logger.js';
import type { NodeBackends } from './backends.js';
import type { Readiness } from '../observability/readiness.js';
import { kafkaCheck, PostgresCheck, redisCheck } from '../observability/readiness-checks.js';
import { RedisCacheStore } from '../cache/redis-cache-store.js';
import { isRetriableRedisError } from '../cache/redis-failure.js';
import { isRetriablePostgresError } from '../storage/db-failure.js';
import { isRetriableKafkaError } from '../event-log/kafka/kafka-failure.js';
import { DependencyFailedError, untilUp } from '../util/until-up.js';

/**
 * The node's start and its backends: which checks /readyz runs for the
 * roles, and how each step that needs a backend waits for it (backoff while
 * it is away, /readyz naming it; a misconfiguration thrown at once).
 */

type Wait = <T>(attempt: () => Promise<T>) => Promise<T>;

export interface DependencyWaits {
  postgres: Wait;
  redis: Wait;
  kafka: Wait;
}

export function dependencyWaits(backends: NodeBackends, readiness: Readiness, signal: AbortSignal, log: Logger): DependencyWaits {
  const message = (err: unknown) => (err instanceof Error && err.message ? err.message : String((err as { code?: unknown })?.code ?? err));
  const redis = backends.cache instanceof RedisCacheStore ? backends.cache : null;
  // ioredis gives up on a command with "max retries" while it reconnects: the connection's own error says why.
  const redisCause = (err: unknown) => redis?.lastConnectionError ?? message(err);
  // Kafka's errors already are one line (KafkaUnavailableError); the others get the dependency's name.
  const failed = (name: string, describe: (err: unknown) => string) => (err: unknown) => new DependencyFailedError(`${name}: ${describe(err)}`, { cause: err });
  const wait = (dependency: string, retriable: (err: unknown) => boolean, describe: (err: unknown) => string, fatal?: (err: unknown) => Error): Wait =>
    (attempt) => untilUp(dependency, attempt, { retriable, describe, fatal, onWait: (reason) => readiness.waiting(reason), signal, log });
  return {
    postgres: wait('postgres', isRetriablePostgresError, message, failed('Postgres', message)),
    redis: wait('redis', isRetriableRedisError, redisCause, failed('Redis', redisCause)),
    kafka: wait('kafka', isRetriableKafkaError, message),
  };
}

/**
 * Adds the checks of what this node's roles need: Postgres always, Redis when
 * configured, Kafka metadata for ingress and delivery on the Kafka backend
 * (the delivery role adds its consumer-group check itself). Returns how to
 * close what the checks keep open.
 */
export function addDependencyChecks(readiness: Readiness, backends: NodeBackends, config: Readonly<Config>): () => Promise<void> {
  const postgres = new PostgresCheck(backends.databaseUrl, config.health.timeoutMs);
  readiness.add('postgres', postgres.check);
  if (backends.cache instanceof RedisCacheStore) readiness.add('redis', redisCheck(backends.cache));
  const kafka = kafkaCheck(backends.eventLog);
  if (kafka && (config.roles.includes('ingress') || config.roles.includes('delivery'))) readiness.add('kafka', kafka);
  return () => postgres.close();
}
