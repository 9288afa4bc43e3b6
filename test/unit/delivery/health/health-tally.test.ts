import t from 'tap';
import { BUCKET_MS, HealthTally } from '../../../../src/delivery/health/health-tally.js';

t.test('attempts add up per target and 5-minute bucket: count, 2xx, latency sum and max', async (t) => {
  const tally = new HealthTally();
  const base = 100 * BUCKET_MS;
  tally.add('1', true, 10.4, null, base + 1);
  tally.add('1', false, 30, 'HTTP 500', base + 2);
  tally.add('1', true, 20, null, base + BUCKET_MS); // the next bucket
  tally.add('2', false, 5, 'ECONNREFUSED', base + 3);
  const { buckets } = tally.take();
  t.same(buckets.sort((a, b) => a.targetId.localeCompare(b.targetId) || a.bucketAt - b.bucketAt), [
    { targetId: '1', bucketAt: base, attempts: 2, succeeded: 1, latencyMsSum: 40, latencyMsMax: 30 },
    { targetId: '1', bucketAt: base + BUCKET_MS, attempts: 1, succeeded: 1, latencyMsSum: 20, latencyMsMax: 20 },
    { targetId: '2', bucketAt: base, attempts: 1, succeeded: 0, latencyMsSum: 5, latencyMsMax: 5 },
  ]);
  t.same(tally.take(), { buckets: [], targets: [] }, 'taking starts afresh');
});

t.test('failures after the last success are counted, with the last error; a success resets the count', async (t) => {
  const tally = new HealthTally();
  tally.add('1', false, 1, 'HTTP 500', 1_000);
  tally.add('1', true, 1, null, 2_000);
  tally.add('1', false, 1, 'HTTP 502', 3_000);
  tally.add('1', false, 1, 'HTTP 503', 4_000);
  tally.add('2', false, 1, 'timeout', 5_000);
  const { targets } = tally.take();
  t.same(targets.find((x) => x.targetId === '1'), { targetId: '1', tailFailures: 2, lastSuccessAt: 2_000, lastError: 'HTTP 503', lastErrorAt: 4_000 });
  t.same(targets.find((x) => x.targetId === '2'), { targetId: '2', tailFailures: 1, lastSuccessAt: null, lastError: 'timeout', lastErrorAt: 5_000 },
    'no success seen: the failures add to what is stored');
});
