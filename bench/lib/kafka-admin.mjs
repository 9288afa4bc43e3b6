import { setTimeout as sleep } from 'node:timers/promises';
import { Admin, ConfigResourceTypes, ListOffsetTimestamps } from '@platformatic/kafka';

/**
 * The bench's own view of Kafka, through @platformatic/kafka's Admin (the
 * client streamgate uses). The topic's high watermarks are the ground truth of
 * how many events streamgate accepted: autocannon stops counting at the
 * deadline, but requests in flight then may still be acked by streamgate, and
 * delivery will (rightly) deliver those too.
 */
export function kafkaAdmin(brokers) {
  // Never create a topic by asking about it: counting a topic that is not there must fail, not make it.
  const admin = new Admin({ clientId: 'streamgate-bench', bootstrapBrokers: brokers, autocreateTopics: false });

  /** Offsets of every partition of the topic at `timestamp` (LATEST: high watermarks, EARLIEST: low). */
  async function offsets(topic, timestamp) {
    const meta = await admin.metadata({ topics: [topic], forceUpdate: true });
    const count = meta.topics.get(topic).partitionsCount;
    const partitions = Array.from({ length: count }, (_, partitionIndex) => ({ partitionIndex, timestamp }));
    const [listed] = await admin.listOffsets({ topics: [{ name: topic, partitions }] });
    return new Map(listed.partitions.map((p) => [p.partitionIndex, p.offset]));
  }

  /** Waits (bounded: a little over streamgate's 10 s session timeout) until no group has members left. */
  async function untilEmpty(groups, timeoutMs = 12_000) {
    const until = Date.now() + timeoutMs;
    while (Date.now() < until) {
      const described = await admin.describeGroups({ groups });
      if ([...described.values()].every((g) => g.members.size === 0)) return;
      await sleep(500);
    }
  }

  /** Topic names the broker knows. */
  const topics = () => admin.listTopics();

  return {
    /** Records in the topic (sum over partitions of high - low). */
    async countEvents(topic) {
      const [high, low] = await Promise.all([offsets(topic, ListOffsetTimestamps.LATEST), offsets(topic, ListOffsetTimestamps.EARLIEST)]);
      let n = 0n;
      for (const [partition, end] of high) n += end - (low.get(partition) ?? 0n);
      return Number(n);
    },
    /**
     * Records of the topic the group has not committed past (the group's lag;
     * a group that never committed counts from the low watermark).
     */
    async uncommitted(topic, groupId) {
      const [high, low] = await Promise.all([offsets(topic, ListOffsetTimestamps.LATEST), offsets(topic, ListOffsetTimestamps.EARLIEST)]);
      const [mine] = await admin.listConsumerGroupOffsets({ groups: [groupId] });
      const partitions = mine?.topics.find((t) => t.name === topic)?.partitions ?? [];
      // -1 when the group has no commit for a partition.
      const committed = new Map(partitions.map((p) => [p.partitionIndex, p.committedOffset]));
      let n = 0n;
      for (const [partition, end] of high) {
        const from = committed.get(partition) ?? -1n;
        const start = low.get(partition) ?? 0n;
        n += end - (from > start ? from : start);
      }
      return Number(n);
    },
    /** The first broker's log.flush.interval.messages: how often it fsyncs (a huge value: never per record). */
    async flushIntervalMessages() {
      const { brokers: known } = await admin.metadata({ topics: [] });
      const [nodeId] = [...known.keys()].sort((a, b) => a - b);
      const [described] = await admin.describeConfigs({
        includeSynonyms: false,
        resources: [{ resourceType: ConfigResourceTypes.BROKER, resourceName: String(nodeId), configurationKeys: ['log.flush.interval.messages'] }],
      });
      return described?.configs.find((c) => c.name === 'log.flush.interval.messages')?.value ?? null;
    },
    /**
     * Creates a topic and waits until every partition has a leader (the
     * broker answers CreateTopics before leaders are elected; a producer
     * started in between would first see "no leader").
     */
    async createTopic(topic, partitions, timeoutMs = 15_000) {
      // retention.ms as streamgate sets it on a topic it makes (retention.hours' default,
      // 720 h): a node refuses no topic, but warns at start about a shorter one.
      await admin.createTopics({ topics: [topic], partitions, replicas: 1, configs: [{ name: 'retention.ms', value: String(720 * 3_600_000) }] });
      const until = Date.now() + timeoutMs;
      for (;;) {
        const meta = await admin.metadata({ topics: [topic], forceUpdate: true }).catch(() => null);
        const parts = meta?.topics.get(topic)?.partitions ?? [];
        if (parts.length === partitions && parts.every((p) => p.leader >= 0)) return;
        if (Date.now() > until) throw new Error(`topic ${topic}: not every partition has a leader after ${timeoutMs} ms`);
        await sleep(100);
      }
    },
    /** Whether the broker knows the topic. */
    topicExists: async (topic) => (await topics()).includes(topic),
    /** Deletes the topic if it exists. */
    async deleteTopic(topic) {
      if ((await topics()).includes(topic)) await admin.deleteTopics({ topics: [topic] });
    },
    /** Best effort: a bench leaves no topics or groups behind. Returns problems as strings. Closes the client. */
    async cleanup(topic, groups) {
      const problems = [];
      try {
        // Only what exists: a run that failed early may not have created them.
        const known = groups.length ? await admin.listGroups() : new Map();
        const ours = groups.filter((g) => known.has(g));
        if (ours.length) {
          // A member that exited without leaving (killed) holds its group until its session expires.
          await untilEmpty(ours);
          // NON_EMPTY_GROUP if it still has not: harmless, it empties by itself.
          await admin.deleteGroups({ groups: ours }).catch((err) => problems.push(`delete groups: ${describe(err)}`));
        }
        if ((await topics()).includes(topic)) {
          await admin.deleteTopics({ topics: [topic] }).catch((err) => problems.push(`delete topic: ${describe(err)}`));
        }
      } catch (err) {
        problems.push(`kafka admin: ${describe(err)}`);
      } finally {
        await admin.close().catch(() => {});
      }
      return problems;
    },
    /** Closes the client (cleanup does too). */
    close: () => admin.close(),
  };
}

/** The library wraps per-broker failures in one error with `errors`: show what each said. */
function describe(err) {
  const inner = (err.errors ?? []).map((e) => e.message).filter(Boolean);
  return inner.length ? `${err.message} (${inner.join('; ')})` : err.message;
}
