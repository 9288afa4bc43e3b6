import t, { type Test } from 'tap';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { embeddedStore } from '../../../src/event-log/embedded/embedded-store.js';
import { EmbeddedWriter } from '../../../src/event-log/embedded/embedded-writer.js';
import { EmbeddedReader } from '../../../src/event-log/embedded/embedded-reader.js';
import { decodeEvent, type EventRecord } from '../../../src/event-log/event-record.js';
import type { LogEntry, PartitionHandler } from '../../../src/event-log/event-log.js';
import { partitionOf } from '../../../src/event-log/murmur2.js';
import { createLogger } from '../../../src/observability/logger.js';

function tempDir(t: Test): string {
  const dir = mkdtempSync(join(tmpdir(), 'sg-embedded-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function record(n: number, partitionKey: string | null): EventRecord {
  return {
    v: 1, id: `evt_${n}`, tenantPublicId: 'ten_x', workspaceId: '1', queueId: '1', queueName: 'q', receivedAt: Date.now(),
    contentType: null, idempotencyKey: null, eventType: null, groupKey: null, partitionKey, path: null, body: Buffer.from(String(n)),
  };
}

/** A partition handler that collects what it is given and finishes nothing itself. */
function collector(seen: Map<number, LogEntry[]>): (p: number) => PartitionHandler {
  return (p) => ({
    deliver: async (entries) => {
      seen.set(p, [...(seen.get(p) ?? []), ...entries]);
    },
    revoke: () => {},
  });
}

t.test('records sit in the partition murmur2 gives, in append order, and resume from the commit', async (t) => {
  const dir = tempDir(t);
  const writer = new EmbeddedWriter(embeddedStore(dir, 4));
  const keys = ['alpha', 'b', 'customer-1234', 'xyz9'];
  await Promise.all(Array.from({ length: 40 }, (_v, n) => writer.append(record(n, keys[n % 4]!))));

  const seen = new Map<number, LogEntry[]>();
  const reader = new EmbeddedReader(embeddedStore(dir, 4), { group: 'g', batchSize: 7, pollMs: 20, retentionMs: 3_600_000 }, createLogger('silent'));
  await reader.start(collector(seen));
  const until = Date.now() + 5000;
  while ([...seen.values()].flat().length < 40 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
  for (const [p, entries] of seen) {
    for (const e of entries) t.equal(partitionOf(e.record!.partitionKey!, 4), p, `${e.record!.partitionKey} in partition ${p}`);
    const ns = entries.map((e) => Number(e.record!.id.slice(4)));
    t.same(ns, [...ns].sort((a, b) => a - b), `partition ${p} in append order`);
    t.same(entries.map((e) => e.offset), entries.map((_e, i) => BigInt(i)), `partition ${p} offsets are dense from 0`);
  }
  t.equal([...seen.values()].flat().length, 40);
  const firstPartition = [...seen.keys()][0]!;
  await reader.commit([[firstPartition, 3n]]);
  await reader.stop();

  const again = new Map<number, LogEntry[]>();
  const second = new EmbeddedReader(embeddedStore(dir, 4), { group: 'g', batchSize: 100, pollMs: 20, retentionMs: 3_600_000 }, createLogger('silent'));
  await second.start(collector(again));
  const until2 = Date.now() + 5000;
  while ((again.get(firstPartition)?.length ?? 0) === 0 && Date.now() < until2) await new Promise((r) => setTimeout(r, 20));
  t.equal(again.get(firstPartition)![0]!.offset, 3n, 'a restarted reader resumes from the committed offset');
  await second.stop();
  await writer.close();
});

t.test('a partition count that differs from the stored log is refused', async (t) => {
  const dir = tempDir(t);
  const store = embeddedStore(dir, 4);
  await store.release();
  t.throws(() => embeddedStore(dir, 8), /has 4 partitions/);
});

t.test('every acknowledged append survives SIGKILL mid-write, in order per partition', async (t) => {
  const dir = tempDir(t);
  const child = spawn(process.execPath, [fileURLToPath(new URL('../../helpers/embedded-writer-child.mjs', import.meta.url)), dir, '4'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const acked = new Set<number>();
  let buffered = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    buffered += chunk.toString();
    const lines = buffered.split('\n');
    buffered = lines.pop()!;
    for (const line of lines) acked.add(Number(line));
  });
  await new Promise<void>((resolve) => {
    const check = setInterval(() => {
      if (acked.size >= 2000) {
        clearInterval(check);
        resolve();
      }
    }, 5);
  });
  child.kill('SIGKILL');
  await new Promise((r) => child.once('exit', r));

  const store = embeddedStore(dir, 4);
  const found = new Map<number, number[]>();
  for (const { key, value } of store.events.getRange({})) {
    const n = Number(decodeEvent(value).id.slice(4));
    found.set(key[0], [...(found.get(key[0]) ?? []), n]);
  }
  await store.release();
  const all = new Set([...found.values()].flat());
  const missing = [...acked].filter((n) => !all.has(n));
  t.same(missing, [], `all ${acked.size} acknowledged records are in the log`);
  for (const [p, ns] of found) t.same(ns, [...ns].sort((a, b) => a - b), `partition ${p} keeps append order`);
});
