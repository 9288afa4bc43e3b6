import t from 'tap';
import { DistributionRecorder, readDistributionSeries } from '../../../src/observability/distribution-metrics.js';
import { MemoryCacheStore } from '../../../src/cache/memory-cache-store.js';
import type { AttemptMessage } from '../../../src/observability/channels.js';
import type { PartnerRoute, RouteTarget } from '../../../src/routing/route-table.js';

/** The in-process cache, with a switch that makes counter writes fail like a lost Redis. */
class FlakyCache extends MemoryCacheStore {
  fail = false;
  override async incr(key: string, by?: number, ttlMs?: number): Promise<number> {
    if (this.fail) throw new Error('cache down');
    return super.incr(key, by, ttlMs);
  }
}

const via: PartnerRoute = {
  producerWorkspaceId: '1', producerTenantPublicId: 'ten_p', catalogEntryPublicId: 'cat_x', integrationPublicId: 'int_1',
  receivingWorkspaceId: '2', receivingTenantPublicId: 'ten_r', receivingQueueId: '3', receivingQueueName: 'orders',
};
const msg = (attempt: number, outcome: AttemptMessage['outcome'], partner = true): AttemptMessage =>
  ({ target: { via: partner ? via : undefined } as RouteTarget, attempt, outcome } as AttemptMessage);
const NOW = Date.UTC(2026, 0, 1, 12, 34, 56);

/** The series' totals over the window, as the metrics endpoint would answer them. */
async function totals(cache: MemoryCacheStore, history: '1h' | '24h' | '7d') {
  const { series } = await readDistributionSeries(cache, 'ten_p', history, NOW);
  const sum = { accepted: 0, delivered: 0, failed: 0 };
  for (const p of series) for (const k of ['accepted', 'delivered', 'failed'] as const) sum[k] += p[k];
  return sum;
}

t.test('counts partner deliveries only: accepted on the first attempt, delivered, failed for good', async (t) => {
  const cache = new FlakyCache();
  t.teardown(() => cache.close());
  const rec = new DistributionRecorder(cache, 60_000, () => NOW);
  rec.record(msg(1, 'delivered'));
  rec.record(msg(1, 'retry'));
  rec.record(msg(2, 'retry'));
  rec.record(msg(3, 'delivered'));
  rec.record(msg(1, 'failed'));
  rec.record(msg(1, 'delivered', false)); // the producer's own target: not distributed traffic
  await rec.flush();
  for (const h of ['1h', '24h', '7d'] as const) t.same(await totals(cache, h), { accepted: 3, delivered: 2, failed: 1 }, h);
  const { series } = await readDistributionSeries(cache, 'ten_p', '1h', NOW);
  const minute = new Date(Date.UTC(2026, 0, 1, 12, 34)).toISOString();
  t.same(series.find((p) => p.t === minute), { t: minute, accepted: 3, delivered: 2, failed: 1 }, 'counted in the minute of the attempts');
});

t.test('counts survive a failed flush and go out with the next one', async (t) => {
  const cache = new FlakyCache();
  t.teardown(() => cache.close());
  const rec = new DistributionRecorder(cache, 60_000, () => NOW);
  rec.record(msg(1, 'delivered'));
  cache.fail = true;
  await rec.flush();
  t.same(await totals(cache, '1h'), { accepted: 0, delivered: 0, failed: 0 }, 'nothing written while the cache fails');
  rec.record(msg(1, 'delivered'));
  cache.fail = false;
  await rec.flush();
  t.same(await totals(cache, '1h'), { accepted: 2, delivered: 2, failed: 0 });
  await rec.flush();
  t.same(await totals(cache, '1h'), { accepted: 2, delivered: 2, failed: 0 }, 'and only once');
});
