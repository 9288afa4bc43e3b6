import t, { type Test } from 'tap';
import { Writable } from 'node:stream';
import { Kafka, logLevel } from 'kafkajs';
import pino from 'pino';
import { loadConfig } from '../../src/config/load-config.js';
import type { Config } from '../../src/config/schema.js';
import { decodeEvent, type EventRecord } from '../../src/log/event-record.js';
import { decodeApiVersionsResponse, encodeApiVersionsRequest } from '../../src/log/kafka-api-versions.js';
import { KafkaConnection } from '../../src/log/kafka-connection.js';
import { createKafka, ensureTopic } from '../../src/log/kafka-client.js';
import { KafkaProducer, type PendingRecord } from '../../src/log/kafka-producer.js';
import { KafkaWriter } from '../../src/log/kafka-writer.js';
import { createLogger, type Logger } from '../../src/observability/logger.js';
import { KAFKA_BROKERS, uniqueSuffix } from '../helpers/backends.js';
import { javaPartition } from '../helpers/java-partition.js';
import { readTopicMessages } from '../helpers/read-topic.js';

/**
 * The producer against the real broker: records land once, in the partition a
 * Java client would pick, in append order per key; a cut connection loses
 * nothing; an oversized record fails alone (the broker says so); a missing topic fails after the
 * retry deadline. Records are read back with kafkajs's consumer (the
 * independent reader).
 */

const BROKERS = KAFKA_BROKERS.split(',');
const PARTITIONS = 6;
const kafka = new Kafka({ clientId: 'sg-test-producer', brokers: BROKERS, logLevel: logLevel.NOTHING });


/** A fresh topic, deleted when the test ends. */
async function freshTopic(t: Test, partitions = PARTITIONS): Promise<string> {
  const topic = `sg-test-producer-${uniqueSuffix()}`;
  const admin = kafka.admin();
  await admin.connect();
  try {
    await admin.createTopics({ topics: [{ topic, numPartitions: partitions, replicationFactor: 1 }], waitForLeaders: true });
  } finally {
    await admin.disconnect();
  }
  t.teardown(async () => {
    const a = kafka.admin();
    await a.connect();
    await a.deleteTopics({ topics: [topic] }).catch(() => {});
    await a.disconnect();
  });
  return topic;
}

function settingsFor(topic: string, producer: Partial<Config['kafka']['producer']> = {}): Readonly<Config['kafka']> {
  return loadConfig({}, { kafka: { brokers: BROKERS, topic, producer } }).kafka;
}

/** A logger whose entries the test can read (level and message only). */
function capturingLogger(): { log: Logger; entries: Array<{ level: number; msg: string }> } {
  const entries: Array<{ level: number; msg: string }> = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) {
        const { level, msg } = JSON.parse(line) as { level: number; msg: string };
        entries.push({ level, msg });
      }
      done();
    },
  });
  return { log: pino({ level: 'debug' }, stream), entries };
}

interface Stored {
  partition: number;
  offset: number;
  key: string | null;
  value: Buffer;
}

/** Everything in the topic (up to the current high watermarks), read with a kafkajs consumer. */
async function readTopic(topic: string): Promise<Stored[]> {
  const admin = kafka.admin();
  await admin.connect();
  const ends = await admin.fetchTopicOffsets(topic);
  await admin.disconnect();
  const expected = ends.reduce((n, p) => n + Number(p.high) - Number(p.low), 0);
  const messages = await readTopicMessages(kafka, topic, expected);
  return messages.map((m) => ({ partition: m.partition, offset: m.offset, key: m.key?.toString() ?? null, value: m.value }));
}

function event(key: string | null, seq: number, body: Buffer = Buffer.from(`{"seq":${seq}}`)): EventRecord {
  return {
    v: 1, id: `evt_${key ?? 'nokey'}_${seq}`, tenantPublicId: 'ten_test', workspaceId: '1', queueId: 'q1', queueName: 'q', receivedAt: Date.now(),
    contentType: 'application/json', idempotencyKey: null, eventType: null, groupKey: null, partitionKey: key, path: null, body,
  };
}

t.test('the broker serves the versions the producer speaks (ApiVersions)', async (t) => {
  const [host, port] = BROKERS[0]!.split(':');
  const conn = await KafkaConnection.open({ host: host!, port: Number(port), connectTimeoutMs: 5000, requestTimeoutMs: 5000 });
  try {
    const { errorCode, apis } = decodeApiVersionsResponse(await conn.request((id) => encodeApiVersionsRequest(id, Buffer.from('sg-test'))));
    t.equal(errorCode, 0);
    const produce = apis.find((a) => a.apiKey === 0)!;
    const metadata = apis.find((a) => a.apiKey === 3)!;
    t.ok(produce.minVersion <= 3 && produce.maxVersion >= 3, `Produce v3 within v${produce.minVersion}–v${produce.maxVersion}`);
    t.ok(metadata.minVersion <= 4 && metadata.maxVersion >= 4, `Metadata v4 within v${metadata.minVersion}–v${metadata.maxVersion}`);
  } finally {
    await conn.close();
  }
});

t.test('5 000 records over 200 keys: each once, in the Java partition of its key, in append order per key', async (t) => {
  const topic = await freshTopic(t);
  const writer = new KafkaWriter(settingsFor(topic, { lingerMs: 1, maxBatch: 500, maxInFlight: 4 }), createLogger('silent'));
  await writer.connect();
  const keys = Array.from({ length: 200 }, (_, i) => (i % 10 === 0 ? `ключ-${i}-€` : `customer-${i}`));
  const appended: Array<Promise<void>> = [];
  const bodies: EventRecord[] = [];
  for (let n = 0; n < 5000; n++) {
    const record = event(keys[n % keys.length]!, Math.floor(n / keys.length));
    bodies.push(record);
    appended.push(writer.append(record));
    // Let flushes happen while appends continue, as under HTTP load.
    if (n % 700 === 0) await new Promise((r) => setImmediate(r));
  }
  for (let n = 0; n < 50; n++) appended.push(writer.append(event(null, n)));
  const outcomes = await Promise.allSettled(appended);
  t.equal(outcomes.filter((o) => o.status === 'rejected').length, 0, 'every append resolved');
  await writer.close();

  const stored = await readTopic(topic);
  t.equal(stored.length, 5050, 'every record stored, none twice');
  const decoded = stored.map((s) => ({ ...s, record: decodeEvent(s.value) }));
  t.equal(new Set(decoded.map((d) => d.record.id)).size, 5050, 'distinct ids');
  let misplaced = 0;
  let keyMismatch = 0;
  for (const d of decoded) {
    if (d.key !== d.record.partitionKey) keyMismatch++;
    if (d.key !== null && d.partition !== javaPartition(d.key, PARTITIONS)) misplaced++;
  }
  t.equal(keyMismatch, 0, 'the Kafka key is the partition key (null stays null)');
  t.equal(misplaced, 0, 'every keyed record in the partition murmur2 gives');
  let outOfOrder = 0;
  for (const key of keys) {
    const seqs = decoded.filter((d) => d.key === key).map((d) => JSON.parse(d.record.body.toString()).seq as number);
    if (seqs.length !== 25 || seqs.some((s, i) => s !== i)) outOfOrder++;
  }
  t.equal(outOfOrder, 0, 'per key: 25 records in append order');
  const unkeyed = new Set(decoded.filter((d) => d.key === null).map((d) => d.partition));
  t.ok(unkeyed.size > 1, `records without a key are spread (${unkeyed.size} partitions)`);
  t.ok(decoded.every((d) => d.record.body.equals(bodies.find((b) => b.id === d.record.id)?.body ?? d.record.body)), 'bodies intact');
});

t.test('a partition over maxBatchBytes is split over several requests, still in order', async (t) => {
  const topic = await freshTopic(t, 2);
  const producer = new KafkaProducer(settingsFor(topic, { maxBatchBytes: 10_000 }), createLogger('silent'));
  await producer.connect();
  const settled: Array<Promise<void>> = [];
  const records: PendingRecord[] = [];
  for (let n = 0; n < 300; n++) {
    settled.push(
      new Promise<void>((resolve, reject) => records.push({ key: n % 2 === 0 ? 'even' : 'odd', value: Buffer.from(`${String(n).padStart(4, '0')}:${'x'.repeat(1000)}`), resolve, reject })),
    );
  }
  await producer.send(records);
  t.equal((await Promise.allSettled(settled)).filter((o) => o.status === 'rejected').length, 0, 'all acknowledged');
  await producer.close();
  const stored = await readTopic(topic);
  t.equal(stored.length, 300);
  for (const key of ['even', 'odd']) {
    const order = stored.filter((s) => s.key === key).map((s) => Number(s.value.subarray(0, 4).toString()));
    t.same(order, order.slice().sort((a, b) => a - b), `${key}: append order`);
  }
});

t.test('sockets destroyed mid-stream: every append still resolves and every record is in the topic', async (t) => {
  const topic = await freshTopic(t);
  const { log, entries } = capturingLogger();
  const writer = new KafkaWriter(settingsFor(topic, { lingerMs: 0, maxBatch: 200, maxInFlight: 4 }), log);
  await writer.connect();
  const total = 4000;
  const ids: string[] = [];
  let next = 0;
  let failures = 0;
  // 40 concurrent senders, each waiting for its append before the next, as HTTP clients do.
  const senders = Array.from({ length: 40 }, async () => {
    while (next < total) {
      const n = next++;
      const record = event(`key-${n % 97}`, n);
      ids.push(record.id);
      await writer.append(record).catch(() => failures++);
    }
  });
  let cuts = 0;
  const cutter = setInterval(() => {
    if (next < total - 200) {
      writer.__destroySockets();
      cuts++;
    }
  }, 15);
  await Promise.all(senders);
  clearInterval(cutter);
  await writer.close();
  t.equal(failures, 0, 'no append rejected');
  t.ok(cuts >= 3, `sockets destroyed ${cuts} times`);
  t.ok(entries.some((e) => e.msg.includes('retrying')), 'requests in flight were cut and retried');

  const stored = await readTopic(topic);
  const seen = new Set(stored.map((s) => decodeEvent(s.value).id));
  t.equal(ids.filter((id) => !seen.has(id)).length, 0, `none missing (${stored.length} stored for ${total}: ${stored.length - seen.size} duplicates)`);
});

t.test('an oversized record fails alone with the broker\'s MESSAGE_TOO_LARGE; the others in its flush succeed', async (t) => {
  const topic = await freshTopic(t); // the broker's default limit: 1 MiB + 12 bytes per batch
  const writer = new KafkaWriter(settingsFor(topic, { lingerMs: 5 }), createLogger('silent'));
  await writer.connect();
  const small = [event('a', 1), event('b', 2), event('a', 3)];
  const huge = event('a', 2, Buffer.alloc(1_100_000, 0x61));
  const outcomes = await Promise.allSettled([writer.append(small[0]!), writer.append(small[1]!), writer.append(huge), writer.append(small[2]!)]);
  await writer.close();
  t.same(outcomes.map((o) => o.status), ['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
  const reason = (outcomes[2] as PromiseRejectedResult).reason as Error;
  t.match(reason.message, /MESSAGE_TOO_LARGE/, reason.message);
  const stored = await readTopic(topic);
  t.same(stored.map((s) => decodeEvent(s.value).id).sort(), small.map((r) => r.id).sort(), 'exactly the small records');
});

t.test('a record over maxBatchBytes travels alone; a topic made by ensureTopic takes an event as large as server.maxBodyBytes', async (t) => {
  const topic = `sg-test-producer-${uniqueSuffix()}`;
  const config = loadConfig({}, { kafka: { brokers: BROKERS, topic, partitions: PARTITIONS } });
  const admin = createKafka(config, createLogger('silent'));
  await ensureTopic(admin, config);
  t.teardown(async () => {
    const a = kafka.admin();
    await a.connect();
    await a.deleteTopics({ topics: [topic] }).catch(() => {});
    await a.disconnect();
  });
  const writer = new KafkaWriter(config.kafka, createLogger('silent'));
  await writer.connect();
  const records = [event('a', 1), event('a', 2, Buffer.alloc(config.server.maxBodyBytes, 0x62)), event('a', 3)];
  const outcomes = await Promise.allSettled(records.map((r) => writer.append(r)));
  await writer.close();
  t.same(outcomes.map((o) => o.status), ['fulfilled', 'fulfilled', 'fulfilled'], `a ${config.server.maxBodyBytes}-byte body fits (over maxBatchBytes ${config.kafka.producer.maxBatchBytes})`);
  const stored = await readTopic(topic);
  // One flush, three concurrent appends: no order between them is promised (a client that needs
  // order waits for each 202), only that each is stored once and whole.
  const byId = new Map(stored.map((s) => [decodeEvent(s.value).id, decodeEvent(s.value)]));
  t.same([...byId.keys()].sort(), records.map((r) => r.id).sort(), 'all three stored');
  t.equal(stored.length, 3, 'each once');
  t.ok(byId.get('evt_a_2')?.body.equals(records[1]!.body), 'the large body whole');
});

t.test('an unknown topic (no auto-creation) rejects after the retry deadline, naming the Kafka error', async (t) => {
  const topic = `sg-test-missing-${uniqueSuffix()}`;
  const producer = new KafkaProducer(settingsFor(topic, { retryMs: 1500 }), createLogger('silent'));
  await producer.connect();
  const started = Date.now();
  const outcome = await new Promise<Error | null>((resolve) => {
    void producer.send([{ key: 'k', value: Buffer.from('v'), resolve: () => resolve(null), reject: resolve }]);
  });
  const waited = Date.now() - started;
  await producer.close();
  t.ok(outcome instanceof Error, 'rejected');
  t.match(outcome?.message, /UNKNOWN_TOPIC_OR_PARTITION/);
  t.match(outcome?.message, /retryMs \(1500 ms\)/);
  t.ok(waited >= 1000 && waited < 5000, `after the deadline (${waited} ms)`);
  const admin = kafka.admin();
  await admin.connect();
  t.notOk((await admin.listTopics()).includes(topic), 'the topic was not created by asking for it');
  await admin.disconnect();
});

t.test('a producer with no reachable broker fails connect after retryMs', async (t) => {
  const producer = new KafkaProducer(
    loadConfig({}, { kafka: { brokers: ['127.0.0.1:1'], topic: 'x', producer: { retryMs: 300, connectTimeoutMs: 200 } } }).kafka,
    createLogger('silent'),
  );
  const started = Date.now();
  await t.rejects(producer.connect(), { name: 'KafkaConnectionError' });
  t.ok(Date.now() - started >= 250, `retried until the deadline (${Date.now() - started} ms)`);
  await producer.close();
});
