import { Admin, ListOffsetTimestamps } from '@platformatic/kafka';

/**
 * Per partition, how many records of `topic` lie past `group`'s committed
 * offset (high watermark - committed; from the low watermark when the group
 * has no commit yet). Sampled just before a crash, this is what at-least-once
 * may deliver again: records handed to delivery (delivered or not) whose
 * progress the group has not stored.
 */
export function groupLag(brokers) {
  const admin = new Admin({ clientId: 'recovery-lag', bootstrapBrokers: brokers, autocreateTopics: false, retries: 0, timeout: 2_000, requestTimeout: 2_000 });

  async function offsets(topic, count, timestamp) {
    const partitions = Array.from({ length: count }, (_, partitionIndex) => ({ partitionIndex, timestamp }));
    const [listed] = await admin.listOffsets({ topics: [{ name: topic, partitions }] });
    return new Map(listed.partitions.map((p) => [p.partitionIndex, p.offset]));
  }

  return {
    /** Map partition -> records past the committed offset. */
    async sample(topic, group) {
      const meta = await admin.metadata({ topics: [topic], forceUpdate: true });
      const count = meta.topics.get(topic).partitionsCount;
      const [high, low, [mine]] = await Promise.all([
        offsets(topic, count, ListOffsetTimestamps.LATEST),
        offsets(topic, count, ListOffsetTimestamps.EARLIEST),
        admin.listConsumerGroupOffsets({ groups: [group] }),
      ]);
      const committed = new Map((mine?.topics.find((t) => t.name === topic)?.partitions ?? []).map((p) => [p.partitionIndex, p.committedOffset]));
      const lag = new Map();
      for (const [partition, end] of high) {
        const from = committed.get(partition) ?? -1n;
        const start = low.get(partition) ?? 0n;
        lag.set(partition, Number(end - (from > start ? from : start)));
      }
      return lag;
    },
    /** Records in the topic (sum of high - low). */
    async count(topic) {
      const meta = await admin.metadata({ topics: [topic], forceUpdate: true });
      const count = meta.topics.get(topic).partitionsCount;
      const [high, low] = await Promise.all([offsets(topic, count, ListOffsetTimestamps.LATEST), offsets(topic, count, ListOffsetTimestamps.EARLIEST)]);
      let n = 0n;
      for (const [p, end] of high) n += end - (low.get(p) ?? 0n);
      return Number(n);
    },
    close: () => admin.close().catch(() => {}),
  };
}
