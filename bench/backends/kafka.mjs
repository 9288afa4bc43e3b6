import { setTimeout as sleep } from 'node:timers/promises';
import { kafkaAdmin } from '../lib/kafka-admin.mjs';
import { findPid } from '../lib/cpu.mjs';
import { onCleanup } from '../lib/cleanup.mjs';
import { say } from '../lib/say.mjs';

/**
 * streamgate as a cluster node: the event log is a fresh Kafka topic, the
 * cache is Redis under a private key prefix. The topic can be counted while
 * streamgate runs (`live`), so expected counts are read from it directly.
 */
export function kafkaBackend({ runId }) {
  const brokers = (process.env.KAFKA_BROKERS || '127.0.0.1:9092').split(',');
  const topic = `sg-bench-${runId}`;
  const group = `sg-bench-${runId}`;
  const replayGroup = `${group}-replay`;
  const kafka = kafkaAdmin(brokers);
  onCleanup(async () => {
    for (const problem of await kafka.cleanup(topic, [group, replayGroup])) say(`cleanup: ${problem}`);
  });
  return {
    name: 'kafka',
    title: 'Kafka topic + Redis cache',
    logLabel: 'the Kafka topic',
    live: true,
    env: {
      KAFKA_BROKERS: brokers.join(','),
      REDIS_URL: process.env.REDIS_URL || 'redis://127.0.0.1:6379',
      STREAMGATE_KAFKA_TOPIC: topic,
      STREAMGATE_KAFKA_GROUP: group,
    },
    groups: { first: group, replay: replayGroup },
    // Other runs/tests on this box publish cache invalidations on the default
    // prefix; a private one keeps their config writes from flushing our caches.
    configYaml: `redis:\n  keyPrefix: "sgbench-${runId}:"\n`,
    // Listed so that what they do for this node is not counted as `others` (noise) by the CPU meter.
    pids: { kafka: findPid('kafka.Kafka'), redis: findPid('redis-server') },
    countEvents: () => settledCount(kafka, topic),
    uncommitted: (groupId) => kafka.uncommitted(topic, groupId),
    /** What a 202 means here, next to the embedded log's fsync: context for the ratio. */
    async notes() {
      const every = await kafka.flushIntervalMessages().catch(() => null);
      if (every === null) return [];
      const never = BigInt(every) >= 2n ** 31n;
      return [
        `durability of a 202: acks=all, and this broker ${never ? 'leaves flushing to the OS (log.flush.interval.messages unbounded): an acked record is in its page cache, not necessarily on disk' : `fsyncs every ${every} messages`}; ` +
          'the embedded log answers 202 only once the LMDB transaction holding the record is synced to disk, so the two do not buy the same durability.',
      ];
    },
  };
}

/**
 * Records in the topic once produce calls still in flight have landed: the
 * count must hold still for a few reads in a row (streamgate acks only after
 * Kafka does, but the bench stops reading responses at the deadline).
 */
async function settledCount(kafka, topic) {
  let last = await kafka.countEvents(topic);
  for (let stable = 0; stable < 3; ) {
    await sleep(150);
    const n = await kafka.countEvents(topic);
    stable = n === last ? stable + 1 : 0;
    last = n;
  }
  return last;
}
