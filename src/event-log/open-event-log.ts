import type { Config } from '../config/schema.js';
import type { Logger } from '../observability/logger.js';
import type { CacheStore } from '../cache/cache-store.js';
import type { EventLogBackend } from './event-log.js';
import { embeddedEventLog } from './embedded/embedded-backend.js';
import { kafkaEventLog } from './kafka/kafka-backend.js';

/**
 * The event log configuration asks for: Kafka when brokers are set, else the
 * embedded log under dataDir. `sharedCache` (Redis) carries the Kafka group's
 * liveness marks; null when only an in-process cache exists.
 */
export async function openEventLog(config: Readonly<Config>, log: Logger, sharedCache: CacheStore | null): Promise<EventLogBackend> {
  return config.kafka.brokers.length === 0 ? embeddedEventLog(config) : kafkaEventLog(config, log, sharedCache);
}
