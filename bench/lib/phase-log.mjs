import { setTimeout as sleep } from 'node:timers/promises';
import { kafkaAdmin } from './kafka-admin.mjs';
import { onCleanup } from './cleanup.mjs';
import { say } from './say.mjs';

/** config/default.yaml kafka.partitions: a node finds the topic as it would have made it. */
export const PARTITIONS = 12;

/**
 * A fresh Kafka topic and consumer group per phase: a node of one phase must
 * not see the records another phase left behind (a new group starts at the
 * earliest offset, so it would deliver them all). `group(suffix)` names more
 * groups on the same topic: the backlog drains replay one topic once per
 * receiver latency, each with its own group. Topic and groups are deleted at
 * cleanup, whichever way the run ends.
 */
export function phaseLog({ runId, brokers, label }) {
  const topic = `sg-bench-${runId}-${label}`;
  const groups = [];
  const admin = kafkaAdmin(brokers);
  onCleanup(async () => {
    for (const problem of await admin.cleanup(topic, groups)) say(`cleanup ${topic}: ${problem}`);
  });
  const group = (suffix = '') => {
    const name = `${topic}${suffix ? `-${suffix}` : ''}`;
    groups.push(name);
    return name;
  };
  return {
    topic,
    admin,
    /** The node environment for this topic and a new group on it. */
    env: (suffix) => ({ KAFKA_BROKERS: brokers.join(','), STREAMGATE_KAFKA_TOPIC: topic, STREAMGATE_KAFKA_GROUP: group(suffix) }),
    countEvents: () => settledCount(admin, topic),
  };
}

/**
 * Records in the topic once produce calls still in flight have landed: the
 * count must hold still for a few reads in a row (streamgate acks only after
 * Kafka does, but the bench stops reading responses at the deadline).
 */
async function settledCount(admin, topic) {
  let last = await admin.countEvents(topic);
  for (let stable = 0; stable < 3; ) {
    await sleep(150);
    const n = await admin.countEvents(topic);
    stable = n === last ? stable + 1 : 0;
    last = n;
  }
  return last;
}
