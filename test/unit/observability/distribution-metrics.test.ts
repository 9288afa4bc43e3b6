import t from 'tap';
import type { Redis } from 'ioredis';
import { DistributionRecorder } from '../../../src/observability/distribution-metrics.js';
import type { AttemptMessage } from '../../../src/observability/channels.js';
import type { PartnerRoute, RouteTarget } from '../../../src/routing/route-table.js';

// The recorder with Redis replaced by a pipeline that records (or fails) its commands.
function fakeRedis() {
  const state = { fail: false, commands: [] as string[][] };
  const redis = {
    pipeline() {
      const queued: string[][] = [];
      const p = {
        hincrby: (k: string, f: string, n: number) => (queued.push(['hincrby', k, f, String(n)]), p),
        expire: (k: string, s: number) => (queued.push(['expire', k, String(s)]), p),
        exec: async () => {
          if (state.fail) throw new Error('redis down');
          state.commands.push(...queued);
          return queued.map(() => [null, 1]);
        },
      };
      return p;
    },
  } as unknown as Redis;
  return { redis, state };
}

const via: PartnerRoute = {
  producerWorkspaceId: '1', producerTenantPublicId: 'ten_p', catalogEntryPublicId: 'cat_x', integrationPublicId: 'int_1',
  receivingWorkspaceId: '2', receivingTenantPublicId: 'ten_r', receivingQueueId: '3', receivingQueueName: 'orders',
};
const msg = (attempt: number, outcome: AttemptMessage['outcome'], partner = true): AttemptMessage =>
  ({ target: { via: partner ? via : undefined } as RouteTarget, attempt, outcome } as AttemptMessage);
const NOW = Date.UTC(2026, 0, 1, 12, 34, 56);

/** Sums the HINCRBYs of one resolution (bucketSeconds) by field. */
const sums = (commands: string[][], bucketSeconds: number) => {
  const out: Record<string, number> = {};
  for (const [cmd, key, field, n] of commands) {
    if (cmd === 'hincrby' && key!.split(':').at(-2) === String(bucketSeconds)) out[field!] = (out[field!] ?? 0) + Number(n);
  }
  return out;
};

t.test('counts partner deliveries only: accepted on the first attempt, delivered, failed for good', async (t) => {
  const { redis, state } = fakeRedis();
  const rec = new DistributionRecorder(redis, 'p:', 60_000, () => NOW);
  rec.record(msg(1, 'delivered'));
  rec.record(msg(1, 'retry'));
  rec.record(msg(2, 'retry'));
  rec.record(msg(3, 'delivered'));
  rec.record(msg(1, 'failed'));
  rec.record(msg(1, 'delivered', false)); // the producer's own target: not distributed traffic
  await rec.flush();
  for (const res of [60, 900, 3600]) t.same(sums(state.commands, res), { accepted: 3, delivered: 2, failed: 1 }, `${res} s buckets`);
  const minuteKey = state.commands.find(([c, k]) => c === 'hincrby' && k!.includes(':60:'))![1];
  t.equal(minuteKey, `p:waas:metrics:ten_p:60:${Date.UTC(2026, 0, 1, 12, 34) / 1000}`);
  t.ok(state.commands.some(([c, k, s]) => c === 'expire' && k === minuteKey && s === '3660'), 'each bucket expires after its series window');
});

t.test('counts survive a failed flush and go out with the next one', async (t) => {
  const { redis, state } = fakeRedis();
  const rec = new DistributionRecorder(redis, 'p:', 60_000, () => NOW);
  rec.record(msg(1, 'delivered'));
  state.fail = true;
  await rec.flush();
  t.same(state.commands, [], 'nothing written while Redis fails');
  rec.record(msg(1, 'delivered'));
  state.fail = false;
  await rec.flush();
  t.same(sums(state.commands, 60), { accepted: 2, delivered: 2 });
  state.commands.length = 0;
  await rec.flush();
  t.same(state.commands, [], 'and only once');
});
