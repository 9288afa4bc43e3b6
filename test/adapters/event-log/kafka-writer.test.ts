import t, { type Test } from 'tap';
import { Writable } from 'node:stream';
import pino from 'pino';
import { loadConfig } from '../../../src/config/load-config.js';
import type { Config } from '../../../src/config/schema.js';
import { decodeEvent, type EventRecord } from '../../../src/event-log/event-record.js';
import { explainKafkaFailure } from '../../../src/event-log/kafka/kafka-security.js';
import { ensureTopic } from '../../../src/event-log/kafka/kafka-topic.js';
import { KafkaWriter } from '../../../src/event-log/kafka/kafka-writer.js';
import { createLogger, type Logger } from '../../../src/observability/logger.js';
import { KAFKA_BROKERS, uniqueSuffix } from '../../helpers/backends.js';
import { javaPartition } from '../../helpers/java-partition.js';
import { createTopic, deleteTopic, readTopicMessages, topicBounds } from '../../helpers/read-topic.js';

/**
 * The writer (the idempotent producer of @platformatic/kafka) against the real
 * broker: records land once, in the partition a Java client would pick, in
 * append order per key; connections cut mid-batch lose nothing and duplicate
 * nothing; an oversized record fails alone (the broker says so); a missing
 * topic fails after the retry deadline. Records are read back with plain
 * fetches (test/helpers/read-topic.ts), not through the code under test.
 */

const BROKERS = KAFKA_BROKERS.split(',');
const PARTITIONS = 6;

/** A fresh topic, deleted when the test ends. */
async function freshTopic(t: Test, partitions = PARTITIONS): Promise<string> {
  const topic = `sg-test-producer-${uniqueSuffix()}`;
  await createTopic(topic, partitions);
  t.teardown(() => deleteTopic(topic));
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

/** Everything in the topic (up to the current high watermarks). */
async function readTopic(topic: string): Promise<Stored[]> {
  const expected = (await topicBounds(topic)).reduce((n, [low, high]) => n + Number(high - low), 0);
  const messages = await readTopicMessages(topic, expected);
  return messages.map((m) => ({ partition: m.partition, offset: m.offset, key: m.key?.toString() ?? null, value: m.value }));
}

function event(key: string | null, seq: number, body: Buffer = Buffer.from(`{"seq":${seq}}`)): EventRecord {
  return {
    v: 1, id: `evt_${key ?? 'nokey'}_${seq}`, tenantPublicId: 'ten_test', workspaceId: '1', queueId: 'q1', queueName: 'q', receivedAt: Date.now(),
    contentType: 'application/json', idempotencyKey: null, eventType: null, groupKey: null, partitionKey: key, path: null, body,
  };
}

t.test('5 000 records over 200 keys: each once, in the Java partition of its key, in append order per key', async (t) => {
  const topic = await freshTopic(t);
  const writer = new KafkaWriter(settingsFor(topic, { lingerMs: 1, maxBatch: 500 }), createLogger('silent'));
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

t.test('flushes are cut at maxBatchBytes, and records stay in append order per key', async (t) => {
  const topic = await freshTopic(t, 2);
  const writer = new KafkaWriter(settingsFor(topic, { maxBatchBytes: 10_000 }), createLogger('silent'));
  await writer.connect();
  const appends: Array<Promise<void>> = [];
  for (let n = 0; n < 300; n++) {
    appends.push(writer.append(event(n % 2 === 0 ? 'even' : 'odd', n, Buffer.from(`${String(n).padStart(4, '0')}:${'x'.repeat(1000)}`))));
  }
  t.equal((await Promise.allSettled(appends)).filter((o) => o.status === 'rejected').length, 0, 'all acknowledged');
  await writer.close();
  const stored = await readTopic(topic);
  t.equal(stored.length, 300);
  for (const key of ['even', 'odd']) {
    const order = stored.filter((s) => s.key === key).map((s) => Number(decodeEvent(s.value).body.subarray(0, 4).toString()));
    t.same(order, order.slice().sort((a, b) => a - b), `${key}: append order`);
  }
});

t.test('connections cut mid-batch: every append resolves, every record is in the topic once, in order per key (idempotent producer)', async (t) => {
  const topic = await freshTopic(t);
  const { log, entries } = capturingLogger();
  // unreachableMs 0: cuts every 40 ms on a loaded machine can keep every answer from arriving for
  // seconds, which the writer would (rightly) take for an unreachable cluster; this test is about resends.
  const writer = new KafkaWriter(settingsFor(topic, { lingerMs: 0, maxBatch: 200, unreachableMs: 0 }), log);
  await writer.connect();
  const total = 2000;
  const ids: string[] = [];
  let next = 0;
  let failures = 0;
  const reasons = new Set<string>();
  // 40 concurrent senders, each waiting for its append before the next, as HTTP clients do.
  const senders = Array.from({ length: 40 }, async () => {
    while (next < total) {
      const n = next++;
      const record = event(`key-${n % 97}`, n);
      ids.push(record.id);
      await writer.append(record).catch((err: Error) => {
        failures++;
        reasons.add(err.message);
      });
    }
  });
  let cuts = 0;
  const cutter = setInterval(() => {
    if (next < total - 200) {
      writer.__destroySockets();
      cuts++;
    }
  }, 40);
  await Promise.all(senders);
  clearInterval(cutter);
  await writer.close();
  t.equal(failures, 0, `no append rejected ${[...reasons].join('; ')}`);
  t.ok(cuts >= 3, `sockets destroyed ${cuts} times`);
  t.ok(entries.some((e) => e.msg.includes('retrying')), 'requests in flight were cut and retried');

  const stored = await readTopic(topic);
  const decoded = stored.map((s) => decodeEvent(s.value));
  const seen = new Set(decoded.map((r) => r.id));
  t.equal(ids.filter((id) => !seen.has(id)).length, 0, 'none missing');
  t.equal(stored.length, total, `none twice (${stored.length} stored for ${total}): the broker dropped the retried copies`);
  let outOfOrder = 0;
  for (let k = 0; k < 97; k++) {
    const seqs = decoded.filter((r) => r.partitionKey === `key-${k}`).map((r) => JSON.parse(r.body.toString()).seq as number);
    if (seqs.some((s, i) => i > 0 && s < seqs[i - 1]!)) outOfOrder++;
  }
  t.equal(outOfOrder, 0, 'per key, the topic holds records in the order their appends were made');
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
  t.teardown(() => deleteTopic(topic));
  await ensureTopic(config);
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
  const writer = new KafkaWriter(settingsFor(topic, { retryMs: 1500 }), createLogger('silent'));
  const started = Date.now();
  const outcome = await writer.append(event('k', 1)).then(() => null, (err: Error) => err);
  const waited = Date.now() - started;
  await writer.close();
  t.ok(outcome instanceof Error, 'rejected');
  t.match(outcome?.message, /UNKNOWN_TOPIC_OR_PARTITION/);
  t.match(outcome?.message, /retryMs \(1500 ms\)/);
  t.ok(waited >= 1000 && waited < 8000, `after the deadline (${waited} ms)`);
  t.equal((await topicBounds(topic).catch(() => null)), null, 'the topic was not created by asking for it');
});

t.test('a record queued behind a retrying flush gets retryMs from its own append, not after that flush', async (t) => {
  const topic = `sg-test-missing-${uniqueSuffix()}`;
  const writer = new KafkaWriter(settingsFor(topic, { retryMs: 4000 }), createLogger('silent'));
  const first = writer.append(event('k', 1)).then(() => null, (err: Error) => err);
  await new Promise((r) => setTimeout(r, 3000));
  const queuedAt = Date.now();
  const second = await writer.append(event('k', 2)).then(() => null, (err: Error) => err);
  const waited = Date.now() - queuedAt;
  t.ok((await first) instanceof Error && second instanceof Error, 'both rejected (the topic does not exist)');
  // Queued at 3 s behind a flush that gives up at 4 s: its own deadline is at 7 s, 4 s after its
  // append. Starting a fresh retryMs when its flush begins would answer only at 8 s.
  t.ok(waited < 4_700, `answered ${waited} ms after its append (retryMs 4000)`);
  await writer.close();
});

t.test('a writer with no reachable broker fails connect after retryMs', async (t) => {
  const writer = new KafkaWriter(
    loadConfig({}, { kafka: { brokers: ['127.0.0.1:1'], topic: 'x', producer: { retryMs: 300, connectTimeoutMs: 200 } } }).kafka,
    createLogger('silent'),
  );
  const started = Date.now();
  const failure = await writer.connect().then(() => null, (err: unknown) => err);
  const waited = Date.now() - started;
  t.ok(failure, 'connect rejected');
  t.match(explainKafkaFailure(failure, ['127.0.0.1:1']), /^Kafka broker 127\.0\.0\.1:1: .*refused/i, 'explained as a refused connection to that broker');
  t.ok(waited >= 250 && waited < 10_000, `retried until the deadline, then gave up (${waited} ms)`);
  await writer.close();
});
