import t, { type Test } from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadConfig } from '../../../src/config/load-config.js';
import type { Config } from '../../../src/config/schema.js';
import type { EventLogBackend, EventLogReader, LogEntry, PartitionHandler } from '../../../src/event-log/event-log.js';
import { decodeEvent, encodeEvent, type EventRecord } from '../../../src/event-log/event-record.js';
import { openEventLog } from '../../../src/event-log/open-event-log.js';
import { createLogger } from '../../../src/observability/logger.js';
import { KAFKA_BROKERS, TEST_PARTITIONS, uniqueSuffix } from '../../helpers/backends.js';
import { deleteTopic } from '../../helpers/read-topic.js';

/**
 * The event log port's contract (src/event-log/event-log.ts): what ingress,
 * delivery and the lookups rely on, whichever adapter runs. Ingress and
 * delivery only see EventLogBackend, so Kafka and the embedded LMDB log must
 * behave alike on every point below; both run this one suite, each on a
 * fresh topic / data folder, built by openEventLog as a node builds it.
 *
 *   1. append resolves only once the record is in the log, and every record
 *      is handed to exactly one partition handler, exactly once;
 *   2. one partition key, one partition, in append order; offsets increase;
 *   3. readAt(partition, offset) gives the record's bytes; never written: null;
 *   4. findSince finds a record of the window by its bytes; no match: null;
 *   5. the next reader of the group resumes after the committed offsets;
 *   6. membership joins after start; lag() lists the owned partitions and
 *      counts what is not committed, down to 0;
 *   7. after pause() nothing more is handed out, not even by a fetch already
 *      under way when it was called, and commits still work.
 *
 * Where the adapters need different time (a Kafka group join, a fetch round),
 * the suite polls for up to 30 s instead of asserting per adapter. The
 * adapters' own tests (embedded-log, kafka-reader, kafka-writer) cover what
 * is theirs alone: SIGKILL mid-write, cut connections, Java partitioning.
 */

const KINDS = ['kafka', 'embedded'] as const;
type Kind = (typeof KINDS)[number];
const KEYS = Array.from({ length: 20 }, (_v, i) => `key-${i}`);
const RECORDS = 200;
/** After the expected entries arrived: long enough for any extra one to arrive too. */
const SETTLE_MS = 1_000;
const log = createLogger('silent');

function configFor(kind: Kind, topic: string, dataDir: string): Readonly<Config> {
  return loadConfig({}, {
    dataDir,
    kafka: {
      brokers: kind === 'kafka' ? KAFKA_BROKERS.split(',') : [],
      topic,
      groupId: `${topic}-group`,
      partitions: TEST_PARTITIONS,
      producer: { lingerMs: 1 },
    },
    embeddedLog: { partitions: TEST_PARTITIONS, batchSize: 50, pollMs: 20 },
  });
}

/** A fresh topic (created by prepare(), deleted at the end) and data folder. */
function freshLog(t: Test, kind: Kind): Readonly<Config> {
  const topic = `sg-test-contract-${uniqueSuffix()}`;
  t.teardown(() => deleteTopic(topic));
  const dataDir = mkdtempSync(join(tmpdir(), 'sg-contract-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  return configFor(kind, topic, dataDir);
}

async function openBackend(t: Test, config: Readonly<Config>): Promise<EventLogBackend> {
  const backend = await openEventLog(config, log, null);
  t.teardown(() => backend.close());
  await backend.prepare();
  return backend;
}

let serial = 0;
function event(key: string): EventRecord {
  const n = serial++;
  return {
    v: 1, id: `evt_${n}`, tenantPublicId: 'ten_contract', workspaceId: '1', queueId: 'q1', queueName: 'q', receivedAt: Date.now(),
    contentType: 'application/json', idempotencyKey: null, eventType: null, groupKey: null, partitionKey: key, path: null,
    body: Buffer.from(JSON.stringify({ n, key })),
  };
}

/** Appends `records` at once through a new writer; every append must resolve. */
async function appendAll(t: Test, backend: EventLogBackend, records: EventRecord[]): Promise<void> {
  const writer = await backend.openWriter();
  const outcomes = await Promise.allSettled(records.map((r) => writer.append(r)));
  await writer.close();
  const failed = outcomes.filter((o) => o.status === 'rejected');
  t.equal(failed.length, 0, `all ${records.length} appends resolve`, { failures: failed.slice(0, 3).map((o) => String((o as PromiseRejectedResult).reason)) });
}

interface Collected {
  reader: EventLogReader;
  /** Every entry handed out, in arrival order. */
  seen: LogEntry[];
  /** Entries a handler got for a partition other than its own. */
  misrouted: LogEntry[];
  /** Partitions handlerFor was asked for, in order. */
  handlers: number[];
  stop(): Promise<void>;
}

/** A started reader of the group whose handlers keep every entry; `commitEach` commits each batch once taken. */
async function startReader(t: Test, backend: EventLogBackend, commitEach: boolean): Promise<Collected> {
  const reader = backend.openReader(log);
  const c: Collected = { reader, seen: [], misrouted: [], handlers: [], stop: async () => {} };
  t.equal(reader.membership().joined, false, 'not a member before start');
  const handlerFor = (partition: number): PartitionHandler => {
    c.handlers.push(partition);
    return {
      deliver: async (entries) => {
        c.seen.push(...entries);
        c.misrouted.push(...entries.filter((e) => e.partition !== partition));
        if (commitEach) await reader.commit([[partition, entries[entries.length - 1]!.offset + 1n]]);
      },
      revoke: () => {},
    };
  };
  let stopped: Promise<void> | null = null;
  c.stop = () => (stopped ??= reader.stop());
  t.teardown(() => c.stop());
  await reader.start(handlerFor);
  await until('membership().joined', () => reader.membership().joined);
  t.pass('a member once started');
  return c;
}

async function until(what: string, check: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(25);
  }
}

const idsOf = (entries: LogEntry[]) => entries.map((e) => e.record?.id ?? `undecodable@${e.partition}:${e.offset}`);
const sorted = (ids: string[]) => [...ids].sort();
const totalLag = (reader: EventLogReader) => reader.lag().reduce((n, l) => n + l.lag, 0n);

for (const kind of KINDS) {
  t.test(`${kind} event log`, async (t) => {
    const started = Date.now();
    const config = freshLog(t, kind);
    const since = Date.now() - 1_000;

    // 1. Appends resolve; what resolved is in the log at once, for a backend
    // opened after the writer and its backend are gone.
    const appended = Array.from({ length: RECORDS }, (_v, i) => event(KEYS[i % KEYS.length]!));
    const byId = new Map(appended.map((r) => [r.id, r]));
    const writerSide = await openEventLog(config, log, null);
    await writerSide.prepare();
    await appendAll(t, writerSide, appended);
    await writerSide.close();

    const backend = await openBackend(t, config);
    // A match that never says yes sees every record of the window: a census of the log.
    const census: string[] = [];
    const none = await backend.findSince(since, 120_000, (bytes) => {
      census.push(decodeEvent(bytes).id);
      return false;
    });
    t.equal(none, null, 'findSince: a match nothing satisfies finds nothing');
    t.same(sorted(census), sorted([...byId.keys()]), 'every resolved append is in the log, once');

    // 1, 2. One reader: each record to exactly one handler, once; per key one partition, in order.
    const one = await startReader(t, backend, false);
    await until(`${RECORDS} entries`, () => one.seen.length >= RECORDS);
    await sleep(SETTLE_MS);
    t.same(sorted(idsOf(one.seen)), sorted([...byId.keys()]), 'every record handed out exactly once');
    t.same(one.misrouted, [], "each entry goes to its own partition's handler");
    t.same(sorted(one.handlers.map(String)), sorted(Array.from({ length: TEST_PARTITIONS }, (_v, p) => String(p))), 'one handler per partition');
    t.equal(one.seen.filter((e) => e.record === null).length, 0, 'every entry decodes');
    for (const e of one.seen) {
      if (e.record && !encodeEvent(e.record).equals(encodeEvent(byId.get(e.record.id)!))) t.fail(`${e.record.id} handed out as appended`);
    }
    const partitionsOfKey = new Map<string, Set<number>>();
    for (const e of one.seen) {
      const key = e.record!.partitionKey!;
      partitionsOfKey.set(key, (partitionsOfKey.get(key) ?? new Set()).add(e.partition));
    }
    t.same([...partitionsOfKey].filter(([, ps]) => ps.size !== 1).map(([k]) => k), [], 'each key in one partition');
    const appendOrder = new Map(appended.map((r, i) => [r.id, i]));
    const disordered = KEYS.filter((key) => {
      const order = one.seen.filter((e) => e.record!.partitionKey === key).map((e) => appendOrder.get(e.record!.id)!);
      return order.some((v, i) => i > 0 && v < order[i - 1]!);
    });
    t.same(disordered, [], 'per key, in append order');
    const byPartition = new Map<number, LogEntry[]>();
    for (const e of one.seen) byPartition.set(e.partition, [...(byPartition.get(e.partition) ?? []), e]);
    const notIncreasing = [...byPartition].filter(([, es]) => es.some((e, i) => i > 0 && e.offset <= es[i - 1]!.offset)).map(([p]) => p);
    t.same(notIncreasing, [], 'offsets strictly increase within a partition');

    // 6. lag() lists every owned partition; nothing is committed yet, so it counts every record.
    t.equal(one.reader.membership().partitions, TEST_PARTITIONS, 'the only member owns every partition');
    t.same(one.reader.lag().map((l) => l.partition).sort((a, b) => a - b), Array.from({ length: TEST_PARTITIONS }, (_v, p) => p), 'lag() lists the owned partitions');
    t.ok(one.reader.lag().every((l) => l.lag >= 0n), 'lag ≥ 0');
    await until(`lag ${RECORDS}`, () => totalLag(one.reader) === BigInt(RECORDS)).catch(() => {});
    t.equal(totalLag(one.reader), BigInt(RECORDS), 'lag counts every record not committed');

    // 3. readAt: the bytes of the record at that offset; an offset never written: null.
    for (const [partition, entries] of byPartition) {
      for (const e of [entries[0]!, entries[Math.floor(entries.length / 2)]!, entries[entries.length - 1]!]) {
        const bytes = await backend.readAt(partition, e.offset);
        const got = bytes === null ? null : decodeEvent(bytes);
        t.same(got && { id: got.id, body: got.body.toString() }, { id: e.record!.id, body: e.record!.body.toString() }, `readAt(${partition}, ${e.offset})`);
      }
      const end = entries[entries.length - 1]!.offset + 1n;
      t.equal(await backend.readAt(partition, end), null, `readAt(${partition}, ${end}): past the end, null`);
      t.equal(await backend.readAt(partition, 1_000_000n), null, `readAt(${partition}, 1000000): never written, null`);
    }

    // 4. findSince: found by its bytes, where the reader saw it; nothing after the window.
    const target = one.seen[Math.floor(one.seen.length * 0.7)]!;
    const targetBytes = Buffer.from(target.record!.id);
    const isTarget = (bytes: Buffer) => bytes.includes(targetBytes) && decodeEvent(bytes).id === target.record!.id;
    const found = await backend.findSince(since, 120_000, isTarget);
    t.same(found && { partition: found.partition, offset: found.offset, id: decodeEvent(found.bytes).id }, { partition: target.partition, offset: target.offset, id: target.record!.id }, 'findSince finds the record by its bytes');
    t.equal(await backend.findSince(Date.now() + 60_000, 60_000, isTarget), null, 'findSince: a window after the record finds nothing');

    // 5. Commit the first half of each partition, stop; the next member gets the second half only.
    const committedIds: string[] = [];
    const points: Array<[number, bigint]> = [];
    for (const [partition, entries] of byPartition) {
      const half = Math.floor(entries.length / 2);
      committedIds.push(...idsOf(entries.slice(0, half)));
      points.push([partition, entries[half]!.offset]);
    }
    const uncommittedIds = idsOf(one.seen).filter((id) => !committedIds.includes(id));
    await one.reader.commit(points);
    await until('lag after the commit', () => totalLag(one.reader) === BigInt(uncommittedIds.length)).catch(() => {});
    t.equal(totalLag(one.reader), BigInt(uncommittedIds.length), 'lag counts only what is not committed');
    await one.stop();
    t.equal(one.reader.membership().joined, false, 'not a member once stopped');

    const two = await startReader(t, backend, false);
    await until(`${uncommittedIds.length} uncommitted entries`, () => two.seen.length >= uncommittedIds.length);
    await sleep(SETTLE_MS);
    t.same(sorted(idsOf(two.seen)), sorted(uncommittedIds), 'the next member resumes after the commits: the uncommitted records, none of the committed');

    // 7. pause(): once a fetch already under way has come back, nothing more is handed out.
    two.reader.pause();
    const late = KEYS.slice(0, 6).map((key) => event(key));
    await appendAll(t, backend, late);
    await sleep(1_500);
    t.same(idsOf(two.seen.slice(uncommittedIds.length)), [], 'nothing is handed out after pause()');
    // Commits still work while paused: the next member starts after them.
    const twoEnds = new Map<number, bigint>();
    for (const e of two.seen) twoEnds.set(e.partition, e.offset + 1n);
    await two.reader.commit([...twoEnds]);
    await two.stop();

    // 5, 6. The third member starts after the commits made while paused: the late records only; once
    // it has committed them all, lag is 0 everywhere.
    const three = await startReader(t, backend, true);
    await until(`${late.length} late entries`, () => three.seen.length >= late.length);
    await sleep(SETTLE_MS);
    t.same(sorted(idsOf(three.seen)), sorted(late.map((r) => r.id)), 'commits made while paused hold: only the late records come again');
    await until('lag 0', () => three.reader.lag().length === TEST_PARTITIONS && totalLag(three.reader) === 0n).catch(() => {});
    t.same(three.reader.lag().map((l) => [l.partition, Number(l.lag)]), Array.from({ length: TEST_PARTITIONS }, (_v, p) => [p, 0]), 'lag reaches 0 once everything is committed');

    // 7, as the port words it ("stops fetching"): records appended the moment pause() returns.
    three.reader.pause();
    const racing = KEYS.slice(6, 10).map((key) => event(key));
    const before = three.seen.length;
    await appendAll(t, backend, racing);
    await sleep(1_500);
    t.same(idsOf(three.seen.slice(before)), [], 'nothing is handed out after pause(), not even by a fetch already under way');
    await three.stop();
    t.comment(`${kind}: ${((Date.now() - started) / 1000).toFixed(1)} s`);
  });
}
