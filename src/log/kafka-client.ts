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

/** Creates the event topic when it does not exist (several nodes may race: that is fine). */
export async function ensureTopic(kafka: Kafka, config: Readonly<Config>): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const existing = await admin.listTopics();
    if (!existing.includes(config.kafka.topic)) {
      await admin.createTopics({
        waitForLeaders: true,
        topics: [{
          topic: config.kafka.topic,
          numPartitions: config.kafka.partitions,
          replicationFactor: config.kafka.replicationFactor,
        }],
      });
    }
  } finally {
    await admin.disconnect();
  }
}
