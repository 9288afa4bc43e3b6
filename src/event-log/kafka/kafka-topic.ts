import { Admin, ConfigResourceTypes } from '@platformatic/kafka';
import { retentionMs } from '../event-log.js';
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
 * The topic's `segment.ms`: the broker deletes whole segments, and only once
 * the newest record of one is past retention.ms, so what a partition keeps is
 * up to retention + one segment (+ the broker's retention check interval).
 * Kafka's default segment (7 days, or 1 GiB) would keep a 30-day retention 37
 * days and a few-minute one for as long as a segment takes to fill: a tenth
 * of the retention, from a minute to a week, keeps it within 10 % over.
 */
export function segmentMs(retentionMs: number): number {
  return Math.min(7 * 86_400_000, Math.max(60_000, Math.round(retentionMs / 10)));
}

/**
 * Creates the event topic when it does not exist (several nodes may race: that
 * is fine), with `retention.ms` from retention.hours (and `segment.ms` to match), and waits until every
 * partition has a leader. A broker that has just started answers before it
 * knows its topics: those answers are retried until `timeoutMs`, so a node
 * started right after its broker does not fail. Returns what is wrong with an
 * existing topic's retention (it keeps records for less than retention.hours),
 * or null.
 */
export async function ensureTopic(config: Readonly<Config>, security: KafkaSecurity = {}, timeoutMs = 60_000): Promise<string | null> {
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
            configs: [
              { name: 'max.message.bytes', value: String(maxMessageBytes(config)) },
              { name: 'retention.ms', value: String(retentionMs(config)) },
              { name: 'segment.ms', value: String(segmentMs(retentionMs(config))) },
            ],
          });
        }
        const meta = await admin.metadata({ topics: [topic], forceUpdate: true });
        const parts = meta.topics.get(topic)?.partitions ?? [];
        if (parts.length > 0 && parts.every((p) => p.leader >= 0)) return await retentionShortfall(config, security);
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

/**
 * When the topic keeps records for less than retention.hours (made by hand, by
 * an older version, or changed since), events older than its retention.ms can
 * no longer be shown or redelivered although their delivery records remain:
 * say so, with the fix. Null when it keeps them long enough (or forever: -1).
 */
async function retentionShortfall(config: Readonly<Config>, security: KafkaSecurity): Promise<string | null> {
  const { topic } = config.kafka;
  // A client of its own: @platformatic/kafka 2.12.1 sends a DescribeConfigs the
  // broker refuses (INVALID_TOPIC_EXCEPTION, or a closed connection) from a
  // client that has asked for metadata before; as its first request it is fine.
  const admin = new Admin(kafkaClientOptions(config.kafka, security, 3));
  let described;
  try {
    [described] = await admin.describeConfigs({
      resources: [{ resourceType: ConfigResourceTypes.TOPIC, resourceName: topic, configurationKeys: ['retention.ms'] }],
    });
  } finally {
    await closeClient(admin);
  }
  const value = described?.configs.find((c) => c.name === 'retention.ms')?.value;
  const kept = value === undefined || value === null ? NaN : Number(value);
  const wanted = retentionMs(config);
  if (!Number.isFinite(kept) || kept < 0 || kept >= wanted) return null;
  return (
    `Kafka topic ${topic} keeps records for ${kept / 3_600_000} h (retention.ms ${kept}), less than retention.hours (${config.retention.hours} h): ` +
    `events older than that can no longer be shown or redelivered. Raise it, e.g. kafka-configs.sh --alter --entity-type topics --entity-name ${topic} --add-config retention.ms=${wanted}`
  );
}
