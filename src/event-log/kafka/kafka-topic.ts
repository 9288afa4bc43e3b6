import { Admin } from '@platformatic/kafka';
import type { Config } from '../../config/schema.js';
import { isRetriableKafkaError } from './kafka-failure.js';
import { closeClient, kafkaClientOptions, type KafkaSecurity } from './kafka-options.js';

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
 * started answers before it knows its topics: those answers are retried until
 * `timeoutMs`, so a node started right after its broker does not fail.
 */
export async function ensureTopic(config: Readonly<Config>, security: KafkaSecurity = {}, timeoutMs = 60_000): Promise<void> {
  const { topic, partitions, replicationFactor } = config.kafka;
  const deadline = Date.now() + timeoutMs;
  const admin = new Admin(kafkaClientOptions(config.kafka, security, 3));
  let lastError: unknown = null;
  try {
    while (Date.now() < deadline) {
      try {
        if (!(await admin.listTopics()).includes(topic)) {
          await admin.createTopics({
            topics: [topic],
            partitions,
            replicas: replicationFactor,
            configs: [{ name: 'max.message.bytes', value: String(maxMessageBytes(config)) }],
          });
        }
        const meta = await admin.metadata({ topics: [topic], forceUpdate: true });
        const parts = meta.topics.get(topic)?.partitions ?? [];
        if (parts.length > 0 && parts.every((p) => p.leader >= 0)) return;
      } catch (err) {
        lastError = err;
        if (!transient(err)) throw err;
      }
      await new Promise((r) => setTimeout(r, 250));
    }
    throw new Error(`topic ${topic} has no leader for every partition after ${timeoutMs} ms`, { cause: lastError });
  } finally {
    await closeClient(admin);
  }
}

/** A race with another creator, or a broker still starting or loading: worth another look. */
function transient(err: unknown): boolean {
  const e = err as { findBy?: (key: string, value: unknown) => unknown };
  if (typeof e?.findBy === 'function' && e.findBy('apiId', 'TOPIC_ALREADY_EXISTS')) return true;
  return isRetriableKafkaError(err);
}
