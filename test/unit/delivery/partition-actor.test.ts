import t from 'tap';
import { PartitionActor, type ActorServices } from '../../../src/delivery/partition-actor.js';
import { ParkWriter } from '../../../src/delivery/park-writer.js';
import { Semaphore } from '../../../src/delivery/semaphore.js';
import type { DeliveryStep, StepResult } from '../../../src/delivery/delivery-step.js';
import type { Job } from '../../../src/delivery/job.js';
import type { DeliveryRecords } from '../../../src/delivery/delivery-records.js';
import type { LogEntry } from '../../../src/event-log/event-log.js';
import type { RouteTable, RouteTarget } from '../../../src/routing/route-table.js';
import type { DeliveryRecordRepo } from '../../../src/storage/delivery-record-repo.js';
import { MemoryParkedRepo, record, silentLog, until } from '../../helpers/lane-fakes.js';

const target = (id: string): RouteTarget => ({
  id, publicId: `tgt_${id}`, name: id, url: new URL('http://r.example/'), disabled: false,
  settings: { auth: { mode: 'none' }, staticHeaders: {}, timeoutMs: 1000 },
});

/** An actor whose deliveries wait until the test releases them (by "event|target"). */
function setup(opts: { targets?: RouteTarget[]; maxPending?: number; finished?: Array<{ offset: bigint; targetId: string }>; recorded?: Set<string>; saturated?: Set<string> } = {}) {
  const targets = opts.targets ?? [target('A')];
  const started: string[] = [];
  const gates = new Map<string, () => void>();
  const progress: bigint[] = [];
  const step = {
    async run(job: Job, _partition: number, _signal: AbortSignal, withdraw?: AbortSignal): Promise<StepResult> {
      const key = `${job.record.id}|${job.targetId}`;
      started.push(key);
      // A saturated target's attempt waits for its permit, which a spill withdraws.
      const granted = await new Promise<boolean>((r) => {
        gates.set(key, () => r(true));
        if (opts.saturated?.has(job.targetId)) withdraw?.addEventListener('abort', () => r(false), { once: true });
      });
      return granted ? { kind: 'done', status: 'delivered' } : { kind: 'withdrawn' };
    },
  } as unknown as DeliveryStep;
  const seen: string[] = [];
  const checks: string[][] = [];
  const deliveryRecords = {
    eventSeen: (e: { eventId: string }) => seen.push(e.eventId),
    delivery() {},
    backlogged: false,
    room: async () => {},
    flush: async () => {},
  } as unknown as DeliveryRecords;
  const deliveryLog = {
    // The records hold the events named in `recorded`, with the deliveries in `finished` over.
    replayCheck: async (_stream: string, records: Array<{ eventId: string; offset: bigint }>) => {
      checks.push(records.map((r) => r.eventId));
      const held = records.filter((r) => opts.recorded?.has(r.eventId));
      const offsets = new Set(held.map((r) => r.offset));
      return { recorded: held.length, finished: (opts.finished ?? []).filter((f) => offsets.has(f.offset)) };
    },
  } as unknown as DeliveryRecordRepo;
  const repo = new MemoryParkedRepo();
  const services: ActorServices = {
    stream: 'g/tp',
    routes: { targetsFor: async () => targets, cachedTargets: () => undefined, sync: async () => {} } as unknown as RouteTable,
    step,
    deliveryRecords,
    parkWriter: new ParkWriter(repo.asRepo(), 1, silentLog),
    parkRepo: repo.asRepo(),
    deliveryLog,
    drainSlots: new Semaphore(4),
    spill: { saturated: (id) => opts.saturated?.has(id) ?? false, slots: () => new Semaphore(4) },
    now: Date.now,
  };
  const actor = new PartitionActor(0, services, {
    maxPending: opts.maxPending ?? 100, holdInMemoryMs: 100, pageSize: 10, sweepMs: 60_000,
    onProgress: (_p, point) => progress.push(point),
  }, silentLog);
  const release = (key: string) => {
    const gate = gates.get(key);
    if (!gate) throw new Error(`${key} has not started`);
    gate();
  };
  const entries = (items: Array<[string, string | null]>, from = 0n): LogEntry[] =>
    items.map(([id, key], i) => ({ partition: 0, offset: from + BigInt(i), record: record(id, key) }));
  return { actor, started, release, progress, entries, seen, repo, checks };
}

t.test('per (target, key) lanes: a stuck delivery holds back its key at its target only', async (t) => {
  const s = setup({ targets: [target('A'), target('B')] });
  await s.actor.deliver(s.entries([['e1', 'k'], ['e2', 'k'], ['e3', 'other']]), async () => {});
  await until(() => s.started.length === 4);
  t.same([...s.started].sort(), ['e1|A', 'e1|B', 'e3|A', 'e3|B'], 'the other key runs at both targets');
  t.notOk(s.started.includes('e2|A') || s.started.includes('e2|B'), 'e2 waits for e1 at each target');
  s.release('e1|B');
  await until(() => s.started.includes('e2|B'));
  t.pass('e2 goes on at B while e1 is still stuck at A');
  t.notOk(s.started.includes('e2|A'));
  t.same(s.progress, [], 'e1 is not finished until it is finished at both targets');
  s.release('e1|A');
  await until(() => s.started.includes('e2|A'));
  t.same(s.progress, [1n], 'now it is');
  s.actor.revoke();
});

t.test('the commit point is the lowest record not finished at every target', async (t) => {
  const s = setup();
  await s.actor.deliver(s.entries([['a', 'x'], ['b', 'y'], ['c', 'z']], 10n), async () => {});
  await until(() => s.started.length === 3);
  s.release('b|A');
  await until(() => s.progress.length === 1);
  t.same(s.progress, [10n], 'b is done but a is not: still 10');
  s.release('a|A');
  await until(() => s.progress.length === 2);
  t.same(s.progress.at(-1), 12n, 'a and b done: 12');
  s.release('c|A');
  await until(() => s.progress.at(-1) === 13n);
  t.pass('all done: one past the last');
  s.actor.revoke();
});

t.test('backpressure: deliver does not return while more than maxPending records are unfinished', async (t) => {
  const s = setup({ maxPending: 2 });
  let returned = false;
  const delivering = s.actor.deliver(s.entries([['a', '1'], ['b', '2'], ['c', '3'], ['d', '4']]), async () => {}).then(() => (returned = true));
  await until(() => s.started.length === 4);
  await new Promise((r) => setTimeout(r, 50));
  t.notOk(returned, 'four pending, limit two: the log stops fetching');
  t.equal(s.actor.pending, 4);
  s.release('a|A');
  s.release('b|A');
  await delivering;
  t.ok(returned, 'back under the limit: deliver returns');
  s.actor.revoke();
});

t.test('replayed records the attempt log has as finished are not delivered again', async (t) => {
  const s = setup({
    targets: [target('A'), target('B')],
    recorded: new Set(['r5', 'r6']),
    finished: [{ offset: 5n, targetId: 'A' }, { offset: 6n, targetId: 'A' }, { offset: 6n, targetId: 'B' }],
  });
  await s.actor.deliver(s.entries([['r5', 'k5'], ['r6', 'k6'], ['r7', 'k7']], 5n), async () => {});
  await until(() => s.started.length === 3);
  t.same(s.started.sort(), ['r5|B', 'r7|A', 'r7|B'], 'only what was not finished');
  t.same(s.seen, ['r5', 'r6', 'r7'], 'every event is still logged as seen');
  // The next batch holds no recorded event: past the replay, and no check after it.
  await s.actor.deliver(s.entries([['r8', 'k8']], 8n), async () => {});
  await s.actor.deliver(s.entries([['r9', 'k9']], 9n), async () => {});
  await until(() => s.started.length === 7);
  t.same(s.checks, [['r5', 'r6', 'r7'], ['r8']], 'checked until a batch of which nothing was recorded');
  s.actor.revoke();
});

t.test('an undecodable entry is skipped, not stuck', async (t) => {
  const s = setup();
  await s.actor.deliver([{ partition: 0, offset: 0n, record: null, decodeError: 'garbage' }], async () => {});
  t.same(s.progress, [1n]);
  s.actor.revoke();
});

t.test('a full partition spills the lanes of a saturated target when another target shares it, and fetches on', async (t) => {
  const s = setup({ targets: [target('A'), target('B')], maxPending: 2, saturated: new Set(['A']) });
  const items: Array<[string, string]> = [['a', 'k1'], ['b', 'k1'], ['c', 'k2'], ['d', 'k2'], ['e', 'k3'], ['f', 'k3']];
  let returned = false;
  const delivering = s.actor.deliver(s.entries(items), async () => {}).then(() => (returned = true));
  await until(() => s.started.filter((k) => k.endsWith('|B')).length === 3);
  for (const id of ['a', 'c', 'e']) s.release(`${id}|B`);
  await until(() => s.started.filter((k) => k.endsWith('|B')).length === 6);
  for (const id of ['b', 'd', 'f']) s.release(`${id}|B`);
  await delivering;
  t.ok(returned, 'deliver returned although A has answered nothing');
  t.equal(s.actor.pending, 0, 'every record is finished: B delivered, A parked');
  t.same(s.progress.at(-1), 6n, 'the commit point moved past all six');
  const parked = [...s.repo.rows.values()].filter((r) => r.targetId === 'A').sort((x, y) => Number(x.seq - y.seq)).map((r) => r.eventId);
  t.same(parked, ['a', 'b', 'c', 'd', 'e', 'f'], "A's deliveries wait in parking, every one of them");
  s.actor.revoke();
});

t.test('a saturated target alone in its partition is not spilled: its records wait in the log', async (t) => {
  const s = setup({ targets: [target('A')], maxPending: 2, saturated: new Set(['A']) });
  let returned = false;
  void s.actor.deliver(s.entries([['a', 'k1'], ['b', 'k1'], ['c', 'k2'], ['d', 'k3']]), async () => {}).then(() => (returned = true));
  await until(() => s.started.length === 3);
  await new Promise((r) => setTimeout(r, 300));
  t.notOk(returned, 'still full: deliver holds the partition');
  t.equal(s.repo.rows.size, 0, 'nothing was parked');
  t.equal(s.actor.pending, 4);
  s.actor.revoke();
});
