import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { decodeEvent, type EventRecord } from '../../src/log/event-record.js';
import { embeddedStore } from '../../src/log/embedded-store.js';
import { KAFKA_BROKERS, TEST_BACKEND, TEST_PARTITIONS, type Backends } from './backends.js';
import { readTopicMessages } from './read-topic.js';

/**
 * What the event log holds, whichever backend the test runs on: the Kafka
 * topic, or the embedded log under the test's data folder (opened through the
 * same registry as the in-process node, so it reads the node's own store).
 */
async function embeddedRecords(backends: Backends): Promise<EventRecord[]> {
  const store = embeddedStore(join(backends.dataDir, 'log'), TEST_PARTITIONS);
  try {
    const out: EventRecord[] = [];
    for (const { value } of store.events.getRange({})) out.push(decodeEvent(value));
    return out;
  } finally {
    await store.release();
  }
}

const kafka = () => new Kafka({ clientId: 'sg-test-inspect', brokers: KAFKA_BROKERS.split(','), logLevel: logLevel.NOTHING });

/** Records in the test topic (sum of high - low watermarks); 0 before the topic has any. */
export async function countRecords(backends: Backends): Promise<number> {
  if (TEST_BACKEND === 'embedded') return (await embeddedRecords(backends)).length;
  const admin = kafka().admin();
  await admin.connect();
  try {
    const offsets = await admin.fetchTopicOffsets(backends.topic);
    return offsets.reduce((n, p) => n + (Number(p.high) - Number(p.low)), 0);
  } finally {
    await admin.disconnect();
  }
}

/**
 * Every record of the test topic, decoded, read with a throwaway consumer
 * group from the beginning: what delivery would see.
 */
export async function readRecords(backends: Backends): Promise<EventRecord[]> {
  if (TEST_BACKEND === 'embedded') return embeddedRecords(backends);
  const expected = await countRecords(backends);
  if (expected === 0) return [];
  const messages = await readTopicMessages(kafka(), backends.topic, expected, {
    groupId: `${backends.groupId}-inspect-${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`,
    timeoutMs: 30_000,
  });
  return messages.map((m) => decodeEvent(m.value));
}

/** True when the test's consumer group has committed every partition up to its end. */
export async function allCommitted(backends: Backends): Promise<boolean> {
  if (TEST_BACKEND === 'embedded') {
    const store = embeddedStore(join(backends.dataDir, 'log'), TEST_PARTITIONS);
    try {
      for (let p = 0; p < TEST_PARTITIONS; p++) {
        if ((store.commits.get([backends.groupId, p]) ?? 0) !== store.endOffset(p)) return false;
      }
      return true;
    } finally {
      await store.release();
    }
  }
  const admin = kafka().admin();
  await admin.connect();
  try {
    const ends = await admin.fetchTopicOffsets(backends.topic);
    const [committed] = await admin.fetchOffsets({ groupId: backends.groupId, topics: [backends.topic] });
    return ends.every((p) => {
      const c = committed!.partitions.find((x) => x.partition === p.partition);
      return Number(p.high) === 0 || (c !== undefined && Number(c.offset) === Number(p.high));
    });
  } finally {
    await admin.disconnect();
  }
}
