import { Kafka, logLevel, type logCreator } from 'kafkajs';
import type { Config } from '../config/schema.js';
import type { Logger } from '../observability/logger.js';

/** kafkajs logs through our pino logger, at warn and above. */
function pinoLogCreator(log: Logger): logCreator {
  return () => ({ level, log: entry }) => {
    const { message, ...extra } = entry;
    if (level <= logLevel.ERROR) log.error({ kafka: extra }, message);
    else if (level === logLevel.WARN) log.warn({ kafka: extra }, message);
  };
}

export function createKafka(config: Readonly<Config>, log: Logger): Kafka {
  return new Kafka({
    clientId: config.kafka.clientId,
    brokers: [...config.kafka.brokers],
    logLevel: logLevel.WARN,
    logCreator: pinoLogCreator(log.child({ component: 'kafka' })),
    retry: { initialRetryTime: 100, retries: 8 },
  });
}

/**
 * The topic's record batch limit: a batch holding one event with the largest
 * body ingress accepts (server.maxBodyBytes) plus its metadata must fit, and
 * never below the broker's own default (1 MiB + 12). Set when the topic is
 * created; an existing topic keeps what it has.
 */
export function maxMessageBytes(config: Readonly<Config>): number {
  return Math.max(1_048_588, config.server.maxBodyBytes + 65_536);
}

/**
 * Creates the event topic when it does not exist (several nodes may race: that
 * is fine) and waits until every partition has a leader. A broker that has just
 * started answers metadata requests before it knows its topics
 * (UNKNOWN_TOPIC_OR_PARTITION, LEADER_NOT_AVAILABLE): those are retried until
 * `timeoutMs`, so a node started right after its broker does not fail.
 */
export async function ensureTopic(kafka: Kafka, config: Readonly<Config>, timeoutMs = 60_000): Promise<void> {
  const { topic, partitions, replicationFactor } = config.kafka;
  const deadline = Date.now() + timeoutMs;
  const admin = kafka.admin();
  await admin.connect();
  try {
    for (;;) {
      try {
        if (!(await admin.listTopics()).includes(topic)) {
          await admin.createTopics({
            waitForLeaders: false,
            topics: [{ topic, numPartitions: partitions, replicationFactor, configEntries: [{ name: 'max.message.bytes', value: String(maxMessageBytes(config)) }] }],
          });
        }
        const meta = await admin.fetchTopicMetadata({ topics: [topic] });
        const parts = meta.topics[0]?.partitions ?? [];
        if (parts.length > 0 && parts.every((p) => p.leader >= 0)) return;
      } catch (err) {
        const e = err as { retriable?: boolean; type?: string };
        const transient = e.retriable === true || e.type === 'TOPIC_ALREADY_EXISTS';
        if (!transient || Date.now() > deadline) throw err;
      }
      if (Date.now() > deadline) throw new Error(`topic ${topic} has no leader for every partition after ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 250));
    }
  } finally {
    await admin.disconnect();
  }
}
