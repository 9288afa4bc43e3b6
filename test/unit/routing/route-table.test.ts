import t from 'tap';
import { RouteTable } from '../../../src/routing/route-table.js';
import { RoutingGate, type GateSource, type StreamView } from '../../../src/routing/routing-gate.js';
import type { TargetRow, TopologyRepo } from '../../../src/storage/topology-repo.js';

// The gate with Postgres and Redis replaced by counters: which targets come
// back, and when the in-process view is (and is not) reused.

const target = (id: string, workspaceId = 'w1'): TargetRow => ({
  id, publicId: `tgt_${id}`, workspaceId, name: id, url: `http://127.0.0.1:9/${id}`, settings: {}, disabledAt: null, disabledReason: null, createdAt: new Date(), updatedAt: new Date(),
});

function fixture() {
  const routes = new Map<string, TargetRow[]>([
    ['q-stream', [target('own')]],
    ['q-recv-1', [target('p1a', 'w2'), target('p1b', 'w2')]],
    ['q-recv-2', [target('p2', 'w3')]],
    ['q-plain', [target('plain')]],
  ]);
  const loads = { targets: 0, streams: 0, activations: 0 };
  const repo = { targetsOfQueue: async (q: string) => (loads.targets++, routes.get(q) ?? []) } as unknown as TopologyRepo;
  const stream: StreamView = {
    catalogEntryPublicId: 'cat_x', producerWorkspaceId: 'w1', producerTenantPublicId: 'ten_p',
    live: [
      { integrationId: 'i1', integrationPublicId: 'int_1', receivingWorkspaceId: 'w2', receivingTenantPublicId: 'ten_r1', receivingQueueId: 'q-recv-1', receivingQueueName: 'orders' },
      { integrationId: 'i2', integrationPublicId: 'int_2', receivingWorkspaceId: 'w3', receivingTenantPublicId: 'ten_r2', receivingQueueId: 'q-recv-2', receivingQueueName: 'orders' },
    ],
  };
  const activations = new Map<string, string[]>([['customer-a', ['i1']], ['customer-b', ['i1', 'i2']]]);
  const source: GateSource = {
    streamOfQueue: async (q) => (loads.streams++, q === 'q-stream' ? stream : null),
    activeIntegrations: async (_w, g) => (loads.activations++, activations.get(g) ?? []),
  };
  let version = 1;
  const gate = new RoutingGate(source, { cache: null, sharedTtlSeconds: 60, ttlMs: 60_000 });
  const table = new RouteTable(repo, 60_000, 5_000, { gate, versions: { currentVersion: async () => version } });
  return { table, loads, activations, stream, bump: () => version++ };
}

const names = (ts: { name: string }[]) => ts.map((x) => x.name);

t.test('a stream event goes to its own targets plus the activated partners’ receiving-queue targets', async (t) => {
  const { table } = fixture();
  t.same(names(await table.targetsFor({ queueId: 'q-stream', groupKey: null })), ['own'], 'no group key: no partner');
  t.same(names(await table.targetsFor({ queueId: 'q-stream', groupKey: 'customer-z' })), ['own'], 'no activation: no partner');
  t.same(names(await table.targetsFor({ queueId: 'q-stream', groupKey: 'customer-a' })), ['own', 'p1a', 'p1b']);
  const both = await table.targetsFor({ queueId: 'q-stream', groupKey: 'customer-b' });
  t.same(names(both), ['own', 'p1a', 'p1b', 'p2']);
  t.equal(both[0]!.via, undefined, "the producer's own target is not distributed traffic");
  t.match(both[3]!.via, { integrationPublicId: 'int_2', producerTenantPublicId: 'ten_p', receivingQueueId: 'q-recv-2', catalogEntryPublicId: 'cat_x' });
  t.same(names(await table.targetsFor({ queueId: 'q-plain', groupKey: 'customer-b' })), ['plain'], 'a queue that is not a stream');
});

t.test('only live subscriptions are opened', async (t) => {
  const { table, stream } = fixture();
  stream.live.splice(0, 1); // i1 paused
  t.same(names(await table.targetsFor({ queueId: 'q-stream', groupKey: 'customer-a' })), ['own']);
  t.same(names(await table.targetsFor({ queueId: 'q-stream', groupKey: 'customer-b' })), ['own', 'p2']);
});

t.test('the in-process view is reused until the config version moves', async (t) => {
  const { table, loads, activations, bump } = fixture();
  await table.sync();
  await table.targetsFor({ queueId: 'q-stream', groupKey: 'customer-a' });
  const first = { ...loads };
  await table.sync();
  t.same(names(await table.targetsFor({ queueId: 'q-stream', groupKey: 'customer-a' })), ['own', 'p1a', 'p1b']);
  t.same(loads, first, 'same version: nothing reloaded');
  activations.set('customer-a', []); // a revoke elsewhere…
  t.same(names(await table.targetsFor({ queueId: 'q-stream', groupKey: 'customer-a' })), ['own', 'p1a', 'p1b'], '…is not seen before a sync');
  bump();
  await table.sync();
  t.same(names(await table.targetsFor({ queueId: 'q-stream', groupKey: 'customer-a' })), ['own'], 'after the version moved, it is');
  t.ok(loads.activations > first.activations && loads.streams > first.streams);
});

t.test('when the version cannot be read, every sync drops the view (never stale, only slower)', async (t) => {
  const { loads } = fixture();
  const gate = new RoutingGate(
    { streamOfQueue: async () => (loads.streams++, null), activeIntegrations: async () => [] },
    { cache: null, sharedTtlSeconds: 60, ttlMs: 60_000 },
  );
  const table = new RouteTable({ targetsOfQueue: async () => [] } as unknown as TopologyRepo, 60_000, 5_000, {
    gate,
    versions: { currentVersion: async () => Promise.reject(new Error('redis down')) },
  });
  for (let i = 0; i < 3; i++) {
    await table.sync();
    await table.targetsFor({ queueId: 'q', groupKey: 'g' });
  }
  t.equal(loads.streams, 3);
});

t.test('concurrent syncs apply versions in the order they were read, never moving back', async (t) => {
  const { loads } = fixture();
  const answers: Array<(v: number) => void> = [];
  const gate = new RoutingGate(
    { streamOfQueue: async () => (loads.streams++, null), activeIntegrations: async () => [] },
    { cache: null, sharedTtlSeconds: 60, ttlMs: 60_000 },
  );
  const used: Array<number | null> = [];
  const useVersion = gate.useVersion.bind(gate);
  gate.useVersion = (v) => (used.push(v), useVersion(v));
  const table = new RouteTable({ targetsOfQueue: async () => [] } as unknown as TopologyRepo, 60_000, 5_000, {
    gate,
    versions: { currentVersion: () => new Promise<number>((resolve) => answers.push(resolve)) },
  });
  const first = table.sync();
  await new Promise((r) => setImmediate(r));
  const second = table.sync(); // after the first read started: it needs a read of its own
  await new Promise((r) => setImmediate(r));
  t.equal(answers.length, 1, 'the second read waits for the first');
  answers[0]!(7);
  await first;
  await new Promise((r) => setImmediate(r));
  answers[1]!(8);
  await second;
  t.same(used, [7, 8]);
});

t.test('syncs that come while a read runs share one read queued behind it (not one read per partition in a row)', async (t) => {
  const answers: Array<(v: number) => void> = [];
  const table = new RouteTable({ targetsOfQueue: async () => [] } as unknown as TopologyRepo, 60_000, 5_000, {
    versions: { currentVersion: () => new Promise<number>((resolve) => answers.push(resolve)) },
  });
  const first = table.sync();
  await new Promise((r) => setImmediate(r));
  t.equal(answers.length, 1, 'one read in flight');
  const later = [1, 2, 3, 4, 5, 6, 7, 8].map(() => table.sync());
  await new Promise((r) => setImmediate(r));
  t.equal(answers.length, 1, 'the callers that came meanwhile wait for it');
  answers[0]!(1);
  await first;
  await new Promise((r) => setImmediate(r));
  t.equal(answers.length, 2, 'eight callers, one more read: it started after they called, so it sees their writes');
  answers[1]!(2);
  await Promise.all(later);
  const after = table.sync();
  await new Promise((r) => setImmediate(r));
  t.equal(answers.length, 3, 'a sync after those reads reads again');
  answers[2]!(2);
  await after;
  const together = [table.sync(), table.sync()];
  t.equal(together[0], together[1], 'callers before a read starts share it');
  await new Promise((r) => setImmediate(r));
  answers[3]!(2);
  await Promise.all(together);
});

t.test('a version read that never answers gives up after versionWaitMs and the view is rebuilt from Postgres', async (t) => {
  let loads = 0;
  const table = new RouteTable({ targetsOfQueue: async () => (loads++, [target('a')]) } as unknown as TopologyRepo, 60_000, 5_000, {
    versions: { currentVersion: () => new Promise<number>(() => {}) },
    versionWaitMs: 50,
  });
  await table.targetsFor({ queueId: 'q' });
  const started = Date.now();
  await table.sync();
  t.ok(Date.now() - started < 1_000, 'sync returned (it does not wait for the silent read)');
  await table.targetsFor({ queueId: 'q' });
  t.equal(loads, 2, 'the view was dropped and loaded again from the repository');
  await Promise.all([table.sync(), table.sync(), table.sync()]);
  t.pass('later syncs do not pile up behind the silent read');
});

t.test('cachedTargets answers without a promise only what targetsFor would answer from memory', async (t) => {
  const { table, bump } = fixture();
  const plain = { queueId: 'q-plain', groupKey: null };
  t.equal(table.cachedTargets(plain), undefined, 'nothing loaded yet: ask targetsFor');
  const loaded = await table.targetsFor(plain);
  t.same(names(table.cachedTargets(plain) ?? []), names(loaded), 'once loaded, the same targets');
  t.equal(table.cachedTargets({ queueId: 'q-plain', groupKey: 'customer-a' }), undefined, 'a group key with a gate: the gate must be asked');
  await table.targetsFor({ queueId: 'q-stream', groupKey: null });
  t.same(names(table.cachedTargets({ queueId: 'q-stream' }) ?? []), ['own'], 'no group key: the queue\'s own targets, as targetsFor answers');
  bump();
  await table.sync();
  t.equal(table.cachedTargets(plain), undefined, 'a newer config version drops the view: ask again');
});
