import type { Kafka } from 'kafkajs';

export interface TopicMessage {
  partition: number;
  offset: number;
  key: Buffer | null;
  value: Buffer;
}

export interface ReadOptions {
  groupId?: string;
  timeoutMs?: number;
  maxBytesPerPartition?: number;
}

/**
 * The first `expected` messages of `topic`, read from the beginning with a
 * throwaway consumer group (kafkajs reads only through groups), sorted by
 * partition and offset.
 *
 * Made to fail loudly rather than hang: a consumer that fails for good
 * (run() rejecting, or a crash kafkajs will not restart) rejects the read
 * instead of surfacing later as an unhandled error; the read gives up after
 * `timeoutMs`; and leaving the group is bounded, since a consumer stuck in a
 * join can take its disconnect with it. A loaded broker (a whole CI run on
 * it) made each of these show up once.
 */
export async function readTopicMessages(kafka: Kafka, topic: string, expected: number, options: ReadOptions = {}): Promise<TopicMessage[]> {
  const out: TopicMessage[] = [];
  if (expected === 0) return out;
  const timeoutMs = options.timeoutMs ?? 60_000;
  const consumer = kafka.consumer({
    groupId: options.groupId ?? `sg-test-read-${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`,
    maxBytesPerPartition: options.maxBytesPerPartition ?? 4 * 1024 * 1024,
  });
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    await new Promise<void>((resolve, reject) => {
      let settled = false;
      const settle = (err?: unknown) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (err) reject(err instanceof Error ? err : new Error(String(err)));
        else resolve();
      };
      const timer = setTimeout(() => settle(new Error(`read ${out.length} of ${expected} records of ${topic} within ${timeoutMs} ms`)), timeoutMs);
      consumer.on(consumer.events.CRASH, (event) => {
        if (!event.payload.restart) settle(event.payload.error);
      });
      consumer
        .run({
          eachMessage: async ({ partition, message }) => {
            out.push({ partition, offset: Number(message.offset), key: message.key, value: message.value! });
            if (out.length >= expected) settle();
          },
        })
        .catch(settle);
    });
  } finally {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      consumer.disconnect(),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, 15_000);
      }),
    ]).catch(() => {});
    clearTimeout(timer);
  }
  return out.sort((a, b) => a.partition - b.partition || a.offset - b.offset);
}
