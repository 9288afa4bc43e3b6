import t from 'tap';
import { bucketBounds, LATENCY_BUCKETS, latencyBucket, latencyQuantile, trimmed } from '../../../src/stats/latency-buckets.js';

t.test('a latency lands in the bucket whose bounds hold it, √2 apart', async (t) => {
  t.equal(latencyBucket(0), 0);
  t.equal(latencyBucket(0.9), 0);
  t.equal(latencyBucket(-5), 0, 'a clock behind counts as instant');
  t.equal(latencyBucket(Number.NaN), 0);
  t.equal(latencyBucket(1), 1);
  t.equal(latencyBucket(1.5), 2);
  t.equal(latencyBucket(2), 3);
  t.equal(latencyBucket(2 ** 40), LATENCY_BUCKETS - 1, 'past 2^31 ms: the last, open-ended bucket');
  for (const ms of [1, 3, 7.5, 12, 99, 250, 1000, 4321, 60_000, 3_600_000, 5 * 86_400_000]) {
    const [lower, upper] = bucketBounds(latencyBucket(ms));
    t.ok(lower <= ms && ms < upper, `${ms} ms in [${lower}, ${upper})`);
    t.ok(upper / lower <= Math.SQRT2 + 1e-9, 'a bucket spans √2');
  }
  t.same(bucketBounds(LATENCY_BUCKETS - 1), [2 ** 31, Infinity]);
});

t.test('quantiles are read within 19 % of the true value', async (t) => {
  const counts = new Array<number>(LATENCY_BUCKETS).fill(0);
  const samples: number[] = [];
  // 1000 latencies spread from 2 ms to 20 s, log-uniform.
  for (let i = 0; i < 1000; i++) samples.push(2 * 10_000 ** (i / 999));
  for (const ms of samples) counts[latencyBucket(ms)]!++;
  for (const q of [0.5, 0.9, 0.99]) {
    const exact = samples[Math.ceil(q * samples.length) - 1]!;
    const read = latencyQuantile(counts, q)!;
    t.ok(Math.abs(read / exact - 1) <= 0.19, `p${q * 100}: ${read.toFixed(1)} ms for ${exact.toFixed(1)} ms`);
  }
  t.equal(latencyQuantile(counts, 1), Math.sqrt(bucketBounds(latencyBucket(20_000))[0] * bucketBounds(latencyBucket(20_000))[1]));
  t.equal(latencyQuantile([], 0.5), null, 'nothing delivered: no latency');
  t.equal(latencyQuantile([0, 0], 0.99), null);
  t.equal(latencyQuantile([3], 0.5), 0.5, 'under a millisecond');
});

t.test('a stored histogram leaves out its trailing zeros', async (t) => {
  t.same(trimmed([0, 2, 0, 1, 0, 0]), [0, 2, 0, 1]);
  t.same(trimmed([0, 0]), []);
});
