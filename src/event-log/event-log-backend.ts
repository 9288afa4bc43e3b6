import type { Config } from '../config/schema.js';
import type { Logger } from '../observability/logger.js';
import type { CacheStore } from '../cache/cache-store.js';
import type { EventLogReader, EventLogWriter, FoundRecord } from './event-log.js';
import { embeddedEventLog } from './embedded/embedded-backend.js';
import { kafkaEventLog } from './kafka/kafka-backend.js';

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

/**
 * The event log configuration asks for: Kafka when brokers are set, else the
 * embedded log under dataDir. `sharedCache` (Redis) carries the Kafka group's
 * liveness marks; null when only an in-process cache exists.
 */
export async function openEventLog(config: Readonly<Config>, log: Logger, sharedCache: CacheStore | null): Promise<EventLogBackend> {
  return config.kafka.brokers.length === 0 ? embeddedEventLog(config) : kafkaEventLog(config, log, sharedCache);
}
