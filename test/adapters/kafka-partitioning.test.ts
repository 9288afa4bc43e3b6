import t from 'tap';
import { Kafka, logLevel } from 'kafkajs';
import { freshBackends, KAFKA_BROKERS } from '../helpers/backends.js';
import { bootstrapDatabase, clientFor, startTestNode } from '../helpers/nodes.js';
import { startReceiver } from '../helpers/receiver.js';

/**
 * Kafka's Java client places a keyed record with murmur2(key) & 0x7fffffff mod
 * partitions. Written out here independently of kafkajs, so the test fails if
 * ingress ever stops keying records the way any Java consumer would expect.
 */
function javaPartition(key: string, partitions: number): number {
  const data = Buffer.from(key);
  const m = 0x5bd1e995;
  let h = (0x9747b28c ^ data.length) | 0;
  const len4 = data.length & ~3;
  for (let i = 0; i < len4; i += 4) {
    let k = data.readInt32LE(i);
    k = Math.imul(k, m);
    k ^= k >>> 24;
    k = Math.imul(k, m);
    h = Math.imul(h, m) ^ k;
  }
  const rest = data.length & 3;
  if (rest === 3) h ^= data[len4 + 2]! << 16;
  if (rest >= 2) h ^= data[len4 + 1]! << 8;
  if (rest >= 1) {
    h ^= data[len4]!;
    h = Math.imul(h, m);
  }
  h ^= h >>> 13;
  h = Math.imul(h, m);
  h ^= h >>> 15;
  return (h & 0x7fffffff) % partitions;
}

t.test('records are keyed by partition key and sit in the partition a Java client would pick', async (t) => {
  const backends = await freshBackends(t);
  const creds = await bootstrapDatabase(backends.databaseUrl);
  const node = await startTestNode(t, backends, { roles: ['ingress', 'management'] });
  const api = clientFor(node.port, creds);
  const receiver = await startReceiver(t);
  await api.wire('keyed', 'keyed-target', receiver.url);

  const keys = ['alpha', 'b', 'customer-1234', 'order:2026-11/x', 'xyz9'];
  for (const key of keys) {
    for (let i = 0; i < 3; i++) t.equal((await api.postEvent('keyed', `{"i":${i}}`, { 'x-service-partition-key': key })).status, 202);
  }

  const kafka = new Kafka({ brokers: KAFKA_BROKERS.split(','), logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  const meta = await admin.fetchTopicMetadata({ topics: [backends.topic] });
  const partitions = meta.topics[0]!.partitions.length;
  await admin.disconnect();

  const consumer = kafka.consumer({ groupId: `${backends.groupId}-inspect` });
  await consumer.connect();
  await consumer.subscribe({ topic: backends.topic, fromBeginning: true });
  const seen: Array<{ key: string; partition: number }> = [];
  await new Promise<void>((resolve) => {
    void consumer.run({
      eachMessage: async ({ partition, message }) => {
        seen.push({ key: message.key!.toString(), partition });
        if (seen.length === keys.length * 3) resolve();
      },
    });
  });
  await consumer.disconnect();

  for (const key of keys) {
    const where = new Set(seen.filter((s) => s.key === key).map((s) => s.partition));
    t.equal(where.size, 1, `${key}: all records in one partition`);
    t.equal([...where][0], javaPartition(key, partitions), `${key}: the partition murmur2 gives`);
  }
});
