import type { Base, BaseOptions, Consumer } from '@platformatic/kafka';
import type { Config } from '../config/schema.js';
import type { KafkaSecurityOptions } from './kafka-security.js';

/** What kafka.ssl / kafka.sasl turn into for a client (empty for a plaintext cluster): see kafka-security.ts. */
export type KafkaSecurity = KafkaSecurityOptions;

const FIRST_RETRY_MS = 100;
const MAX_RETRY_MS = 1_000;

/**
 * The options every client of ours shares (producer, group consumer, lookup
 * consumer, admin): the brokers, our client id, the security settings and the
 * timeouts. The library's own retries back off from 100 ms to 1 s; how long a
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
    retryDelay: (_client, _operation, attempt) => Math.min(FIRST_RETRY_MS * 2 ** (attempt - 1), MAX_RETRY_MS),
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
 * anyway, leaving the broker to notice at the session timeout.
 */
export async function closeClient(client: Pick<Base, 'close'>): Promise<void> {
  try {
    await client.close();
  } catch {
    await new Promise<void>((resolve) => (client as unknown as { close(force: boolean, cb: () => void): void }).close(true, () => resolve()));
  }
}
