import { join } from 'node:path';
import { decodeEvent, type EventRecord } from '../../src/event-log/event-record.js';
import { embeddedStore } from '../../src/event-log/embedded/embedded-store.js';
import { TEST_BACKEND, TEST_PARTITIONS, type Backends } from './backends.js';
import { committedOffsets, readTopicMessages, topicBounds } from './read-topic.js';

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

/** Records in the test topic (sum of high - low watermarks); 0 before the topic has any. */
export async function countRecords(backends: Backends): Promise<number> {
  if (TEST_BACKEND === 'embedded') return (await embeddedRecords(backends)).length;
  const bounds = await topicBounds(backends.topic);
  return bounds.reduce((n, [low, high]) => n + Number(high - low), 0);
}

/**
 * Every record of the test topic, decoded, read from the beginning with
 * plain fetches: what delivery would see.
 */
export async function readRecords(backends: Backends): Promise<EventRecord[]> {
  if (TEST_BACKEND === 'embedded') return embeddedRecords(backends);
  const expected = await countRecords(backends);
  if (expected === 0) return [];
  const messages = await readTopicMessages(backends.topic, expected, { timeoutMs: 30_000 });
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
  const ends = await topicBounds(backends.topic);
  const committed = await committedOffsets(backends.groupId, backends.topic);
  return ends.every(([, high], partition) => high === 0n || committed.get(partition) === high);
}
