import t, { type Test } from 'tap';
import { createHook } from 'node:async_hooks';
import { tracingChannel } from 'node:diagnostics_channel';
import { loadConfig } from '../../../src/config/load-config.js';
import type { Config } from '../../../src/config/schema.js';
import type { LogEntry, PartitionHandler } from '../../../src/event-log/event-log.js';
import { decodeEvent, type EventRecord } from '../../../src/event-log/event-record.js';
import { KafkaLookup } from '../../../src/event-log/kafka/kafka-lookup.js';
import { KafkaReader } from '../../../src/event-log/kafka/kafka-reader.js';
import { KafkaWriter } from '../../../src/event-log/kafka/kafka-writer.js';
import { createLogger } from '../../../src/observability/logger.js';
import { fetchChannel, type FetchMessage } from '../../../src/observability/channels.js';
import { KAFKA_BROKERS, TEST_BACKEND, uniqueSuffix } from '../../helpers/backends.js';
import { createTopic, deleteTopic } from '../../helpers/read-topic.js';
import { startKafkaProxy } from '../../helpers/kafka-proxy.js';

/**
 * The reader (our fetch loop on the library's group membership) and the
 * lookups against the real broker, without a node or its HTTP server: what
 * the writer appends is handed to each partition's handler in order, once;
 * what was committed is not handed over again to the next member of the
 * group; a record is found again by offset and by time.
 */
if (TEST_BACKEND === 'embedded') {
  t.pass('runs with STREAMGATE_TEST_BACKEND=kafka only');
  process.exit(0);
}

const BROKERS = KAFKA_BROKERS.split(',');
const PARTITIONS = 4;

function settingsFor(topic: string, groupId: string): Readonly<Config['kafka']> {
  return loadConfig({}, { kafka: { brokers: BROKERS, topic, groupId, producer: { lingerMs: 1 } } }).kafka;
}

function event(key: string, seq: number): EventRecord {
  return {
    v: 1, id: `evt_${key}_${seq}`, tenantPublicId: 'ten_test', workspaceId: '1', queueId: 'q1', queueName: 'q', receivedAt: Date.now(),
    contentType: 'application/json', idempotencyKey: null, eventType: null, groupKey: null, partitionKey: key, path: null, body: Buffer.from(`{"seq":${seq}}`),
  };
}

async function freshTopic(t: Test): Promise<string> {
  const topic = `sg-test-reader-${uniqueSuffix()}`;
  await createTopic(topic, PARTITIONS);
  t.teardown(() => deleteTopic(topic));
  return topic;
}

async function append(settings: Readonly<Config['kafka']>, records: EventRecord[]): Promise<void> {
  const writer = new KafkaWriter(settings, createLogger('silent'));
  await writer.connect();
  await Promise.all(records.map((r) => writer.append(r)));
  await writer.close();
}

/** A reader whose handlers keep every entry and commit it at once; resolves `seen` entries in arrival order. */
function collectingReader(settings: Readonly<Config['kafka']>): { reader: KafkaReader; seen: LogEntry[] } {
  const reader = new KafkaReader(settings, createLogger('silent'));
  const seen: LogEntry[] = [];
  const handlerFor = (partition: number): PartitionHandler => ({
    deliver: async (entries) => {
      seen.push(...entries);
      await reader.commit([[partition, entries[entries.length - 1]!.offset + 1n]]);
    },
    revoke: () => {},
  });
  void reader.start(handlerFor);
  return { reader, seen };
}

async function until(what: string, check: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Every Timeout created from now on, by whom, until it is cleared or has run; the
 * returned function lists those the Kafka client armed that still hold the process
 * (where each was set, for the failure message).
 */
function trackKafkaTimers(t: Test): () => string[] {
  const timers = new Map<number, { stack: string; timer: NodeJS.Timeout }>();
  const hook = createHook({
    init(id, type, _trigger, resource) {
      if (type === 'Timeout') timers.set(id, { stack: new Error().stack ?? '', timer: resource as NodeJS.Timeout });
    },
    destroy(id) {
      timers.delete(id);
    },
  }).enable();
  t.teardown(() => hook.disable());
  return () =>
    [...timers.values()]
      .filter(({ timer, stack }) => timer.hasRef() && stack.includes('@platformatic/kafka'))
      .map(({ stack }) => stack.split('\n').filter((line) => line.includes('@platformatic/kafka')).slice(0, 3).join(' | '));
}

t.test('every appended record reaches its partition handler once, in order per key; the next member resumes after the commits', async (t) => {
  const topic = await freshTopic(t);
  const settings = settingsFor(topic, `sg-test-group-${uniqueSuffix()}`);
  const keys = Array.from({ length: 30 }, (_, i) => `key-${i}`);
  const first = Array.from({ length: 600 }, (_, n) => event(keys[n % keys.length]!, Math.floor(n / keys.length)));
  await append(settings, first);

  const one = collectingReader(settings);
  await until('600 entries', () => one.seen.length >= 600);
  t.ok(one.reader.membership().joined, 'a member of the group');
  t.equal(one.reader.membership().partitions, PARTITIONS, 'the only member owns every partition');
  const ids = one.seen.map((e) => e.record!.id);
  t.equal(new Set(ids).size, 600, 'each once');
  t.equal(one.seen.filter((e) => e.record === null).length, 0, 'every entry decodes');
  let outOfOrder = 0;
  for (const key of keys) {
    const seqs = one.seen.filter((e) => e.record!.partitionKey === key).map((e) => JSON.parse(e.record!.body.toString()).seq as number);
    if (seqs.some((s, i) => s !== i)) outOfOrder++;
  }
  t.equal(outOfOrder, 0, 'per key, in append order');
  await until('lag 0', () => one.reader.lag().every((l) => l.lag === 0n), 10_000);
  await one.reader.stop();

  const later = Array.from({ length: 50 }, (_, n) => event(keys[n % keys.length]!, 1000 + n));
  await append(settings, later);
  const two = collectingReader(settings);
  t.teardown(() => two.reader.stop());
  await until('the 50 later entries', () => two.seen.length >= 50);
  await new Promise((r) => setTimeout(r, 500)); // anything extra would come within a fetch or two
  t.same(two.seen.map((e) => e.record!.id).sort(), later.map((r) => r.id).sort(), 'only what was not committed');
});

t.test('records appended while others flow all arrive, in order; every fetch answer is reported with its records', async (t) => {
  const topic = await freshTopic(t);
  const settings = settingsFor(topic, `sg-test-group-${uniqueSuffix()}`);
  const reported: number[] = [];
  const onFetch = (m: unknown) => reported.push((m as FetchMessage).records);
  fetchChannel.subscribe(onFetch);
  t.teardown(() => fetchChannel.unsubscribe(onFetch));
  const one = collectingReader(settings);
  t.teardown(() => one.reader.stop());
  await until('the group joined', () => one.reader.membership().joined);

  // A steady stream: 20 appends of 25, 30 ms apart.
  const writer = new KafkaWriter(settings, createLogger('silent'));
  await writer.connect();
  const keys = ['a', 'b', 'c', 'd', 'e'];
  let n = 0;
  for (let burst = 0; burst < 20; burst++) {
    await Promise.all(Array.from({ length: 25 }, () => writer.append(event(keys[n % keys.length]!, n++))));
    await new Promise((r) => setTimeout(r, 30));
  }
  await until('500 entries', () => one.seen.length >= 500);
  // Then one more on its own, once the stream has stopped: it is not held back waiting for company.
  await new Promise((r) => setTimeout(r, 300));
  const lone = Date.now();
  await writer.append(event('a', n++));
  await until('the lone entry', () => one.seen.length >= 501, 5_000);
  t.ok(Date.now() - lone < 1_000, `the lone record arrived ${Date.now() - lone} ms after its append`);
  await writer.close();

  const seqs = (key: string) => one.seen.filter((e) => e.record!.partitionKey === key).map((e) => JSON.parse(e.record!.body.toString()).seq as number);
  t.equal(new Set(one.seen.map((e) => e.record!.id)).size, 501, 'each once');
  t.ok(keys.every((k) => seqs(k).every((s, i, all) => i === 0 || s > all[i - 1]!)), 'per key, in append order');
  t.equal(reported.reduce((a, b) => a + b, 0), 501, 'the fetch answers reported carry every record handed over');
});

t.test('a record is found again by partition and offset, and by time', async (t) => {
  const topic = await freshTopic(t);
  const settings = settingsFor(topic, `sg-test-group-${uniqueSuffix()}`);
  const since = Date.now() - 1000;
  await append(settings, Array.from({ length: 40 }, (_, n) => event(`k${n % 8}`, n)));
  const { reader, seen } = collectingReader(settings);
  await until('40 entries', () => seen.length >= 40);
  await reader.stop();

  const lookup = new KafkaLookup(settings);
  t.teardown(() => lookup.close());
  const target = seen[17]!;
  const bytes = await lookup.readAt(target.partition, target.offset);
  t.equal(bytes === null ? null : decodeEvent(bytes).id, target.record!.id, 'by offset');
  t.equal(await lookup.readAt(target.partition, 1_000_000n), null, 'past the end: null');
  const found = await lookup.findSince(since, 60_000, (value) => decodeEvent(value).id === target.record!.id);
  t.match(found, { partition: target.partition, offset: target.offset }, 'by time');
  t.equal(await lookup.findSince(since, 60_000, () => false), null, 'nothing matches: null');
});

t.test('a reader stopped while its group rebalances leaves no timer behind: the process exits at once', async (t) => {
  // The Kafka client arms a heartbeat-stall timer when a rejoin fails, and closing the
  // consumer mid-rejoin fails it: with the default window (the rebalance timeout, 20 s)
  // that timer kept a process whose node had stopped alive for 20 s.
  const topic = await freshTopic(t);
  const settings = settingsFor(topic, `sg-test-group-${uniqueSuffix()}`);
  const one = collectingReader(settings);
  await until('the first member joined', () => one.reader.membership().joined);

  const kafkaTimers = trackKafkaTimers(t);

  // The first member rejoins when the second joins: stop it while that rejoin is in flight.
  const group = tracingChannel<unknown, { operation?: string; client?: unknown }>('plt:kafka:consumer:group');
  let rejoining: (() => void) | null = null;
  const rejoinStarted = new Promise<void>((resolve) => (rejoining = resolve));
  const ownConsumer = (one.reader as unknown as { consumer: unknown }).consumer;
  const onStart = (ctx: { operation?: string; client?: unknown }) => {
    if (ctx.operation === 'joinGroup' && ctx.client === ownConsumer) rejoining?.();
  };
  group.subscribe({ start: onStart, end() {}, asyncStart() {}, asyncEnd() {}, error() {} });
  t.teardown(() => group.unsubscribe({ start: onStart, end() {}, asyncStart() {}, asyncEnd() {}, error() {} }));
  const two = collectingReader(settings);
  t.teardown(() => two.reader.stop());
  await rejoinStarted;
  await one.reader.stop();
  await two.reader.stop();

  // A heartbeat interval later nothing of the clients' may still hold the process.
  await new Promise((r) => setTimeout(r, settings.heartbeatIntervalMs + 1_000));
  t.same(kafkaTimers(), [], 'no Kafka client timer still holds the process');
});

t.test('a reader stopped as a second member starts joining leaves no timer behind either', async (t) => {
  // Stopped before its own rejoin began, the first member's client completed that rejoin after
  // the leave and heartbeated on its closed connections, each failure scheduling the next
  // heartbeat: a timer that held the process for good (the CI timeout of key-revocation).
  const kafkaTimers = trackKafkaTimers(t);
  const topic = await freshTopic(t);
  for (const wait of [0, 300]) {
    const settings = settingsFor(topic, `sg-test-group-${uniqueSuffix()}`);
    const one = collectingReader(settings);
    await until('the first member joined', () => one.reader.membership().joined);
    const two = collectingReader(settings);
    t.teardown(() => two.reader.stop());
    await new Promise((r) => setTimeout(r, wait));
    await one.reader.stop();
    await two.reader.stop();
    await new Promise((r) => setTimeout(r, settings.heartbeatIntervalMs + 1_000));
    t.same(kafkaTimers(), [], `stopped ${wait} ms after the second member started: no Kafka client timer holds the process`);
  }
});

t.test('a reader whose broker refused or went silent stops within seconds', async (t) => {
  // Silent, a fetch in flight and the leave each waited out their request timeout and the
  // library's retries: stop() took over two minutes (a node's SIGTERM then ended by the CLI's
  // shutdown deadline, not by the node).
  for (const mode of ['refuse', 'blackhole'] as const) {
    const topic = await freshTopic(t);
    const proxy = await startKafkaProxy(t);
    const settings = loadConfig({}, { kafka: { brokers: [`127.0.0.1:${proxy.port}`], topic, groupId: `sg-test-group-${uniqueSuffix()}` } }).kafka;
    const { reader } = collectingReader(settings);
    await until('joined through the proxy', () => reader.membership().joined);
    await proxy.cut(mode);
    const started = Date.now();
    await reader.stop();
    const took = Date.now() - started;
    t.ok(took < 15_000, `${mode}: stopped in ${took} ms`);
  }
});
