import { randomBytes } from 'node:crypto';
import type { Consumer, Kafka } from 'kafkajs';

/**
 * Reads the record at one offset of one partition, for redelivery of an
 * event whose delivery is long over (the log is the only copy of its body).
 * kafkajs reads only through consumer groups, so this joins a throwaway group
 * of its own (no offsets are ever committed, so the broker forgets it once it
 * leaves), seeks, takes the one message and leaves. Slow (a group join) but
 * only used by an operator's redeliver call. Null when the log no longer
 * holds the offset (retention) or nothing came within `timeoutMs`.
 */
export async function fetchRecordAt(kafka: Kafka, topic: string, partition: number, offset: bigint, timeoutMs = 15_000): Promise<Buffer | null> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const bounds = (await admin.fetchTopicOffsets(topic)).find((p) => p.partition === partition);
    if (!bounds || offset < BigInt(bounds.low) || offset >= BigInt(bounds.high)) return null;
  } finally {
    await admin.disconnect();
  }
  // One message is wanted: do not pull megabytes from every partition.
  const consumer = await throwawayConsumer(kafka, topic, 256 * 1024);
  let timer: NodeJS.Timeout | undefined;
  try {
    return await new Promise<Buffer | null>((resolve, reject) => {
      timer = setTimeout(() => resolve(null), timeoutMs);
      consumer
        .run({
          autoCommit: false,
          eachBatch: async ({ batch }) => {
            if (batch.partition !== partition) return;
            for (const m of batch.messages) {
              const at = BigInt(m.offset);
              if (at === offset) return resolve(m.value ?? null);
              if (at > offset) return resolve(null); // compacted away
            }
          },
        })
        .then(() => consumer.seek({ topic, partition, offset: offset.toString() }), reject);
    });
  } finally {
    clearTimeout(timer);
    await consumer.disconnect();
  }
}

/**
 * A consumer subscribed to `topic` in a group of its own that never commits
 * (kafkajs reads only through groups): the broker forgets the group once the
 * consumer leaves. The caller seeks once `run` has started, and disconnects.
 */
export async function throwawayConsumer(kafka: Kafka, topic: string, maxBytesPerPartition: number): Promise<Consumer> {
  const consumer = kafka.consumer({
    groupId: `streamgate-read-${randomBytes(8).toString('hex')}`,
    maxWaitTimeInMs: 100,
    allowAutoTopicCreation: false,
    maxBytesPerPartition,
  });
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: false });
  } catch (err) {
    await consumer.disconnect();
    throw err;
  }
  return consumer;
}
