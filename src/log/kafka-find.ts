import type { Kafka } from 'kafkajs';
import type { FoundRecord } from './event-log.js';
import { throwawayConsumer } from './kafka-fetch.js';

/**
 * Finds the first record that `match`es among those Kafka stamped from
 * `sinceMs` to `sinceMs + windowMs`, in every partition: the offsets come
 * from a ListOffsets-by-time request, the records from a throwaway consumer
 * group that seeks there (kafkajs reads only through groups; no offset is
 * ever committed). For an event GET that finds nothing in the attempt log yet
 * (delivery behind): slow (a group join), so the caller runs one at a time.
 */
export async function findRecordSince(
  kafka: Kafka,
  topic: string,
  sinceMs: number,
  windowMs: number,
  match: (value: Buffer) => boolean,
  timeoutMs = 15_000,
): Promise<FoundRecord | null> {
  const admin = kafka.admin();
  await admin.connect();
  const starts = new Map<number, string>();
  try {
    const highs = new Map((await admin.fetchTopicOffsets(topic)).map((p) => [p.partition, BigInt(p.high)]));
    for (const { partition, offset } of await admin.fetchTopicOffsetsByTimestamp(topic, sinceMs)) {
      const high = highs.get(partition);
      if (high !== undefined && BigInt(offset) >= 0n && BigInt(offset) < high) starts.set(partition, offset);
    }
  } finally {
    await admin.disconnect();
  }
  if (starts.size === 0) return null;
  const consumer = await throwawayConsumer(kafka, topic, 1024 * 1024);
  let timer: NodeJS.Timeout | undefined;
  try {
    return await new Promise<FoundRecord | null>((resolve, reject) => {
      timer = setTimeout(() => resolve(null), timeoutMs);
      const open = new Set(starts.keys());
      const settle = (found: FoundRecord | null) => {
        open.clear();
        resolve(found);
      };
      consumer
        .run({
          autoCommit: false,
          eachBatch: async ({ batch }) => {
            if (!open.has(batch.partition)) return;
            const high = BigInt(batch.highWatermark);
            for (const m of batch.messages) {
              if (BigInt(m.offset) < BigInt(starts.get(batch.partition)!)) continue;
              if (m.value && match(m.value)) return settle({ partition: batch.partition, offset: BigInt(m.offset), bytes: m.value });
              // Past the window, or at the end of what the partition holds: not here.
              if (Number(m.timestamp) > sinceMs + windowMs || BigInt(m.offset) + 1n >= high) {
                open.delete(batch.partition);
                if (open.size === 0) return settle(null);
                return;
              }
            }
          },
        })
        .then(() => {
          for (const [partition, offset] of starts) consumer.seek({ topic, partition, offset });
        }, reject);
    });
  } finally {
    clearTimeout(timer);
    await consumer.disconnect();
  }
}
