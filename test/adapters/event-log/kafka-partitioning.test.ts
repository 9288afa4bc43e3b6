import t from 'tap';
import { freshBackends } from '../../helpers/backends.js';
import { bootstrapDatabase, clientFor, startTestNode } from '../../helpers/nodes.js';
import { startReceiver } from '../../helpers/receiver.js';
import { javaPartition } from '../../helpers/java-partition.js';
import { readTopicMessages, topicBounds } from '../../helpers/read-topic.js';


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

  const partitions = (await topicBounds(backends.topic)).length;

  const seen = (await readTopicMessages(backends.topic, keys.length * 3)).map((m) => ({
    key: m.key!.toString(),
    partition: m.partition,
  }));

  for (const key of keys) {
    const where = new Set(seen.filter((s) => s.key === key).map((s) => s.partition));
    t.equal(where.size, 1, `${key}: all records in one partition`);
    t.equal([...where][0], javaPartition(key, partitions), `${key}: the partition murmur2 gives`);
  }
});
