import type { Base, BaseOptions, Consumer } from '@platformatic/kafka';
import type { Config } from '../../config/schema.js';
import type { KafkaSecurityOptions } from './kafka-security.js';
import { backoffDelay, type BackoffOptions } from '../../util/backoff.js';

/** What kafka.ssl / kafka.sasl turn into for a client (empty for a plaintext cluster): see kafka-security.ts. */
export type KafkaSecurity = KafkaSecurityOptions;

/**
 * How every Kafka loop of ours backs off (the library's retries, the writer's
 * resends, the reader's fetches and joins): 100 ms doubling to 500 ms. The
 * ceiling is low on purpose: while a broker is away a retry costs one refused
 * connection, and once it answers again delivery should resume within about
 * half a second of it (bench/recovery.mjs).
 */
export const KAFKA_BACKOFF: Readonly<BackoffOptions> = { baseMs: 100, maxMs: 500 };

/**
 * The options every client of ours shares (producer, group consumer, lookup
 * consumer, admin): the brokers, our client id, the security settings and the
 * timeouts. The library's own retries back off as KAFKA_BACKOFF; how long a
 * caller keeps trying overall is its own business (kafka.producer.retryMs for
 * appends, forever for the delivery consumer).
 */
export function kafkaClientOptions(settings: Readonly<Config['kafka']>, security: KafkaSecurity, retries: number): BaseOptions {
  return {
    clientId: settings.clientId,
    bootstrapBrokers: [...settings.brokers],
    connectTimeout: settings.producer.connectTimeoutMs,
    // A request the broker never answers fails the connection after this; the
    // broker's own wait (acks=all, fetch long-poll) is always shorter.
    requestTimeout: settings.producer.requestTimeoutMs + 5_000,
    timeout: settings.producer.requestTimeoutMs,
    retries,
    retryDelay: (_client, _operation, attempt) => backoffDelay(attempt - 1, KAFKA_BACKOFF),
    // Topics are created by ensureTopic with our settings, never implicitly.
    autocreateTopics: false,
    ...security,
  };
}

/** One topic of a Fetch request, and a Fetch answer, as the library's consumer takes and gives them. */
export type FetchRequestTopic = Parameters<Consumer['fetch']>[0]['topics'][number];
export type FetchResponse = Awaited<ReturnType<Consumer['fetch']>>;

/**
 * Closes a client without throwing: a consumer first leaves its group (the
 * partitions move at once); when that fails (broker away), it is closed
 * anyway, leaving the broker to notice at the session timeout. `force` skips
 * the polite part (a producer the writer gave up on: its retries stop now).
 */
export async function closeClient(client: Pick<Base, 'close'>, force = false): Promise<void> {
  const forced = () => new Promise<void>((resolve) => (client as unknown as { close(force: boolean, cb: () => void): void }).close(true, () => resolve()));
  if (force) return forced();
  try {
    await client.close();
  } catch {
    await forced();
  }
}

/** A transaction marker batch (attributes bit 5): its offsets count, it holds no event. */
export function isControlBatch(batch: { attributes: number }): boolean {
  return (batch.attributes & 0x20) !== 0;
}
