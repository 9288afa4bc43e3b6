import { Admin } from '@platformatic/kafka';
import type { Config } from '../../config/schema.js';
import type { Logger } from '../../observability/logger.js';
import type { CacheStore } from '../../cache/cache-store.js';
import type { EventLogBackend } from '../event-log.js';
import { ensureTopic } from './kafka-topic.js';
import { closeClient, kafkaClientOptions } from './kafka-options.js';
import { explainKafkaFailure, kafkaSecurityOptions, KafkaUnavailableError } from './kafka-security.js';
import { KafkaWriter } from './kafka-writer.js';
import { KafkaReader } from './kafka-reader.js';
import { KafkaLookup } from './kafka-lookup.js';
import { GroupLiveness } from './group-liveness.js';

/** Kafka as an event log backend: the topic, the writer, the group reader and lookups. */
export async function kafkaEventLog(config: Readonly<Config>, log: Logger, sharedCache: CacheStore | null): Promise<EventLogBackend> {
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
      let shortfall: string | null;
      try {
        // Short: a broker still away is waited out by the caller, which backs off and says so on /readyz.
        shortfall = await ensureTopic(config, security, 1_000);
      } catch (err) {
        // A refused login, an untrusted certificate, no broker: one line naming the broker and the cause.
        throw unavailable(err);
      }
      // Not fatal (deliveries are not at risk), but what it costs must reach whoever runs the node.
      if (shortfall !== null) log.error({ topic: config.kafka.topic }, shortfall);
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

