import { Kafka, logLevel } from 'kafkajs';
import { decodeEvent, type EventRecord } from '../../src/log/event-record.js';
import { KAFKA_BROKERS, type Backends } from './backends.js';

const kafka = () => new Kafka({ clientId: 'sg-test-inspect', brokers: KAFKA_BROKERS.split(','), logLevel: logLevel.NOTHING });

/** Records in the test topic (sum of high - low watermarks); 0 before the topic has any. */
export async function countRecords(backends: Backends): Promise<number> {
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
  const expected = await countRecords(backends);
  if (expected === 0) return [];
  const consumer = kafka().consumer({ groupId: `${backends.groupId}-inspect-${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}` });
  await consumer.connect();
  const out: EventRecord[] = [];
  try {
    await consumer.subscribe({ topic: backends.topic, fromBeginning: true });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`read ${out.length} of ${expected} records`)), 30_000);
      void consumer.run({
        eachMessage: async ({ message }) => {
          out.push(decodeEvent(message.value!));
          if (out.length >= expected) {
            clearTimeout(timer);
            resolve();
          }
        },
      });
    });
  } finally {
    await consumer.disconnect();
  }
  return out;
}
