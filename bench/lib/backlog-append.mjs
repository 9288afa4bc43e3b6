import postgres from 'postgres';
import { compatibilityPartitioner, ProduceAcks, Producer, stringSerializers } from '@platformatic/kafka';

const { encodeEvent } = await import(new URL('../../dist/event-log/event-record.js', import.meta.url).href);

/** Ids of the queue `name` in the bench database, as an event record carries them. */
export async function queueIds(databaseUrl, name) {
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  try {
    const [row] = await sql`SELECT q.id::text AS "queueId", q.workspace_id::text AS "workspaceId" FROM queues q WHERE q.name = ${name}`;
    if (!row) throw new Error(`queue ${name} not found`);
    return row;
  } finally {
    await sql.end();
  }
}

/**
 * Appends `events` records straight to `topic`, as ingress would have written
 * them (streamgate's own record encoding, keyed `k0..k{keys-1}`, placed by
 * murmur2 like streamgate's writer), so a delivery node finds a backlog
 * without ingress having to build it at its own pace.
 */
export async function appendBacklog({ brokers, topic, events, keys, bodyBytes, tenantPublicId, queue, queueName, idPrefix }) {
  const producer = new Producer({
    clientId: 'sg-bench-backlog', bootstrapBrokers: brokers, autocreateTopics: false, partitioner: compatibilityPartitioner,
    serializers: { key: stringSerializers.key },
  });
  const body = Buffer.from(`{"pad":"${'x'.repeat(Math.max(0, bodyBytes - 10))}"}`);
  try {
    for (let i = 0; i < events; i += 5000) {
      const messages = [];
      for (let j = i; j < Math.min(events, i + 5000); j++) {
        const key = `k${j % keys}`;
        const record = {
          v: 1, id: `evt_${idPrefix}${j}`, tenantPublicId, workspaceId: queue.workspaceId, queueId: queue.queueId,
          queueName, receivedAt: Date.now(), contentType: 'application/json', idempotencyKey: null, eventType: null,
          groupKey: null, partitionKey: key, path: null, body,
        };
        messages.push({ topic, key, value: encodeEvent(record) });
      }
      await producer.send({ acks: ProduceAcks.ALL, messages });
    }
  } finally {
    await producer.close();
  }
}
