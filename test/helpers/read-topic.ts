import { Admin, ConfigResourceTypes, Consumer, ListOffsetTimestamps } from '@platformatic/kafka';
import { closeClient, isControlBatch } from '../../src/event-log/kafka/kafka-options.js';
import { KAFKA_BROKERS } from './backends.js';

/**
 * What tests ask of the broker directly, beside the code under test: topics
 * made and removed, watermarks, a group's commits, and every record of a
 * topic. Records are read with plain Fetch requests from the first offset of
 * each partition (no consumer group), so the reader shares nothing with the
 * consumer it checks.
 */
export interface TopicMessage {
  partition: number;
  offset: number;
  key: Buffer | null;
  value: Buffer;
}

const BROKERS = KAFKA_BROKERS.split(',');
const baseOptions = { clientId: 'sg-test-inspect', bootstrapBrokers: BROKERS, retries: 5, retryDelay: 200, autocreateTopics: false };

async function withAdmin<T>(fn: (admin: Admin) => Promise<T>): Promise<T> {
  const admin = new Admin(baseOptions);
  try {
    return await fn(admin);
  } finally {
    await closeClient(admin);
  }
}

async function withReader<T>(fn: (consumer: Consumer<Buffer, Buffer, Buffer, Buffer>) => Promise<T>): Promise<T> {
  const consumer = new Consumer<Buffer, Buffer, Buffer, Buffer>({ ...baseOptions, groupId: 'sg-test-inspect-unused', isolationLevel: 0 });
  try {
    return await fn(consumer);
  } finally {
    await closeClient(consumer);
  }
}

/** Creates `topic` and waits until every partition has a leader. */
export async function createTopic(topic: string, partitions: number): Promise<void> {
  await withAdmin(async (admin) => {
    await admin.createTopics({ topics: [topic], partitions, replicas: 1 });
    for (let i = 0; i < 100; i++) {
      const meta = await admin.metadata({ topics: [topic], forceUpdate: true }).catch(() => null);
      const parts = meta?.topics.get(topic)?.partitions ?? [];
      if (parts.length === partitions && parts.every((p) => p.leader >= 0)) return;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`topic ${topic} has no leaders after 10 s`);
  });
}

/** Deletes `topic`; a topic that was never created is fine. */
export async function deleteTopic(topic: string): Promise<void> {
  await withAdmin((admin) => admin.deleteTopics({ topics: [topic] })).catch(() => {});
}

/** One setting of a topic as the broker describes it (null when unset and without default). */
export async function topicSetting(topic: string, name: string): Promise<string | null> {
  return withAdmin(async (admin) => {
    const [described] = await admin.describeConfigs({ resources: [{ resourceType: ConfigResourceTypes.TOPIC, resourceName: topic, configurationKeys: [name] }] });
    return described?.configs.find((c) => c.name === name)?.value ?? null;
  });
}

/** Sets one setting of a topic (incremental: the others stay). */
export async function setTopicSetting(topic: string, name: string, value: string): Promise<void> {
  await withAdmin((admin) =>
    admin.incrementalAlterConfigs({ resources: [{ resourceType: ConfigResourceTypes.TOPIC, resourceName: topic, configs: [{ name, configOperation: 0, value }] }] }),
  );
}

/** Drops every record the topic holds now, as retention does when it passes them (DeleteRecords up to the high watermark). */
export async function dropAllRecords(topic: string): Promise<void> {
  const bounds = await topicBounds(topic);
  await withAdmin((admin) =>
    admin.deleteRecords({ topics: [{ name: topic, partitions: bounds.map(([, high], partition) => ({ partition, offset: high })) }] }),
  );
}

/** Per partition: [first offset kept, next offset to be written]. */
export async function topicBounds(topic: string): Promise<Array<[bigint, bigint]>> {
  return withReader((consumer) => topicBoundsWith(consumer, topic));
}

/** The offsets `groupId` committed in `topic`, by partition (-1 where none). */
export async function committedOffsets(groupId: string, topic: string): Promise<Map<number, bigint>> {
  return withAdmin(async (admin) => {
    const [group] = await admin.listConsumerGroupOffsets({ groups: [groupId] });
    const out = new Map<number, bigint>();
    for (const t of group?.topics ?? []) {
      if (t.name !== topic) continue;
      for (const p of t.partitions) out.set(p.partitionIndex, p.committedOffset);
    }
    return out;
  });
}

/**
 * Every record of `topic` from the start of each partition to its end as of
 * now, sorted by partition and offset. Fails if fewer than `expected` came
 * back within `timeoutMs` (a read that should see them all).
 */
export async function readTopicMessages(topic: string, expected = 0, options: { timeoutMs?: number } = {}): Promise<TopicMessage[]> {
  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
  return withReader(async (consumer) => {
    const out: TopicMessage[] = [];
    const bounds = await topicBoundsWith(consumer, topic);
    for (let partition = 0; partition < bounds.length; partition++) {
      let [at, high] = bounds[partition]!;
      while (at < high) {
        if (Date.now() > deadline) throw new Error(`read ${out.length} of ${expected} records of ${topic} within ${options.timeoutMs ?? 60_000} ms`);
        const metadata = await consumer.metadata({ topics: [topic] });
        const layout = metadata.topics.get(topic)!;
        const response = await consumer.fetch({
          node: layout.partitions[partition]!.leader,
          topics: [{ topicId: layout.id, partitions: [{ partition, fetchOffset: at, partitionMaxBytes: 4 * 1024 * 1024, currentLeaderEpoch: -1, lastFetchedEpoch: -1 }] }],
          maxWaitTime: 500,
          minBytes: 1,
          maxBytes: 4 * 1024 * 1024,
          isolationLevel: 0,
        });
        const from = at;
        for (const t of response.responses) {
          for (const p of t.partitions) {
            for (const batch of p.records ?? []) {
              if (isControlBatch(batch)) continue;
              for (const record of batch.records) {
                const offset = batch.firstOffset + BigInt(record.offsetDelta);
                if (offset < at) continue;
                out.push({ partition, offset: Number(offset), key: record.key, value: record.value ?? Buffer.alloc(0) });
                at = offset + 1n;
              }
            }
          }
        }
        if (at === from) await new Promise((r) => setTimeout(r, 50));
      }
    }
    if (out.length < expected) throw new Error(`read ${out.length} of ${expected} records of ${topic}`);
    return out.sort((a, b) => a.partition - b.partition || a.offset - b.offset);
  });
}

async function topicBoundsWith(consumer: Consumer<Buffer, Buffer, Buffer, Buffer>, topic: string): Promise<Array<[bigint, bigint]>> {
  const low = (await consumer.listOffsets({ topics: [topic], timestamp: ListOffsetTimestamps.EARLIEST })).get(topic) ?? [];
  const high = (await consumer.listOffsets({ topics: [topic], timestamp: ListOffsetTimestamps.LATEST })).get(topic) ?? [];
  return high.map((h, p) => [low[p] ?? 0n, h] as [bigint, bigint]);
}

/** The members of `groupId` with the partitions of `topic` each holds (empty while it rebalances). */
export async function groupMembers(groupId: string, topic: string): Promise<Map<string, number[]>> {
  return withAdmin(async (admin) => {
    const group = (await admin.describeGroups({ groups: [groupId] })).get(groupId);
    const out = new Map<string, number[]>();
    for (const [id, member] of group?.members ?? []) out.set(id, [...(member.assignments?.get(topic)?.partitions ?? [])]);
    return out;
  });
}
