import { setTimeout as sleep } from 'node:timers/promises';
import kafkajs from 'kafkajs';

// CommonJS package: not every export is visible as a named ESM import.
const { ConfigResourceTypes, Kafka, logLevel } = kafkajs;

/**
 * The bench's own view of Kafka. The topic's high watermarks are the ground
 * truth of how many events streamgate accepted: autocannon stops counting at
 * the deadline, but requests in flight then may still be acked by streamgate,
 * and delivery will (rightly) deliver those too.
 */
export function kafkaAdmin(brokers) {
  const kafka = new Kafka({ clientId: 'streamgate-bench', brokers, logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  let connected = null;
  const ready = () => (connected ??= admin.connect());
  /** Waits (bounded: a little over streamgate's 10 s session timeout) until no group has members left. */
  async function untilEmpty(groups, timeoutMs = 12_000) {
    const until = Date.now() + timeoutMs;
    while (Date.now() < until) {
      const described = await admin.describeGroups(groups);
      if (described.groups.every((g) => g.members.length === 0)) return;
      await sleep(500);
    }
  }
  return {
    /** Records in the topic (sum over partitions of high - low). */
    async countEvents(topic) {
      await ready();
      const offsets = await admin.fetchTopicOffsets(topic);
      return offsets.reduce((n, p) => n + (Number(p.high) - Number(p.low)), 0);
    },
    /**
     * Records of the topic the group has not committed past (the group's lag;
     * a group that never committed counts from the low watermark).
     */
    async uncommitted(topic, groupId) {
      await ready();
      const ends = await admin.fetchTopicOffsets(topic);
      const [mine] = await admin.fetchOffsets({ groupId, topics: [topic] });
      const committed = new Map((mine?.partitions ?? []).map((p) => [p.partition, Number(p.offset)]));
      return ends.reduce((n, p) => n + Number(p.high) - Math.max(committed.get(p.partition) ?? -1, Number(p.low)), 0);
    },
    /** The first broker's log.flush.interval.messages: how often it fsyncs (a huge value: never per record). */
    async flushIntervalMessages() {
      await ready();
      const { brokers } = await admin.describeCluster();
      const { resources } = await admin.describeConfigs({
        includeSynonyms: false,
        resources: [{ type: ConfigResourceTypes.BROKER, name: String(brokers[0].nodeId), configNames: ['log.flush.interval.messages'] }],
      });
      return resources[0]?.configEntries[0]?.configValue ?? null;
    },
    /** Best effort: a bench leaves no topics or groups behind. Returns problems as strings. */
    async cleanup(topic, groups) {
      const problems = [];
      try {
        await ready();
        // Only what exists: a run that failed early may not have created them.
        const known = new Set((await admin.listGroups()).groups.map((g) => g.groupId));
        const ours = groups.filter((g) => known.has(g));
        if (ours.length) {
          // A member that exited without leaving (killed) holds its group until its session expires.
          await untilEmpty(ours);
          // NON_EMPTY_GROUP if it still has not: harmless, it empties by itself.
          await admin.deleteGroups(ours).catch((err) => {
            const why = (err.groups ?? []).map((g) => `${g.groupId}: ${g.error?.type ?? g.errorCode}`).join(', ');
            problems.push(`delete groups: ${err.message}${why ? ` (${why})` : ''}`);
          });
        }
        if ((await admin.listTopics()).includes(topic)) {
          await admin.deleteTopics({ topics: [topic], timeout: 10_000 }).catch((err) => problems.push(`delete topic: ${err.message}`));
        }
      } catch (err) {
        problems.push(`kafka admin: ${err.message}`);
      } finally {
        await admin.disconnect().catch(() => {});
      }
      return problems;
    },
  };
}
