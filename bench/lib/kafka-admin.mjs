import { Kafka, logLevel } from 'kafkajs';

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
  return {
    /** Records in the topic (sum over partitions of high - low). */
    async countEvents(topic) {
      await ready();
      const offsets = await admin.fetchTopicOffsets(topic);
      return offsets.reduce((n, p) => n + (Number(p.high) - Number(p.low)), 0);
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
          // NON_EMPTY_GROUP when a killed member's session has not expired yet: harmless, it empties by itself.
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
