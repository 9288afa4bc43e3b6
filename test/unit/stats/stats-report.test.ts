import t from 'tap';
import { LATENCY_BUCKETS, latencyBucket } from '../../../src/stats/latency-buckets.js';
import { statsReport } from '../../../src/stats/stats-report.js';
import { windowBounds } from '../../../src/stats/stats-window.js';

const now = Date.UTC(2026, 10, 27, 9, 30, 20);
const latency = (ms: number, n: number) => {
  const l = new Array<number>(LATENCY_BUCKETS).fill(0);
  l[latencyBucket(ms)] = n;
  return l;
};

t.test('windows end with the step now is in', async (t) => {
  t.same(windowBounds('1h', now), { fromS: now / 1000 - 20 + 60 - 3600, toS: now / 1000 - 20 + 60 });
  const day = windowBounds('24h', now);
  t.equal((day.toS - day.fromS) / 600, 144);
  t.equal(day.toS % 600, 0);
  const week = windowBounds('7d', now);
  t.equal(week.toS, Date.UTC(2026, 10, 27, 10) / 1000);
});

t.test('the report sums queues into the total, zero-fills, and reads quantiles and shares', async (t) => {
  const { fromS, toS } = windowBounds('1h', now);
  const last = toS - 60;
  const report = statsReport('1h', fromS, toS, null, [
    { queue: 'a', at: last, counts: [10, 8, 2, 1, 8, 0, 1, 2, 0, 0], latency: latency(10, 8) },
    { queue: 'b', at: last, counts: [1, 1, 0, 0, 1, 0, 0, 0, 0, 0], latency: latency(5000, 1) },
    { queue: 'b', at: fromS, counts: [5, 5, 0, 0, 5, 0, 0, 0, 0, 0], latency: latency(10, 5).slice(0, latencyBucket(10) + 1) },
    { queue: 'b', at: toS, counts: [99, 0, 0, 0, 0, 0, 0, 0, 0, 0], latency: latency(1, 0) },
  ]);
  t.equal(report.total.series.length, 60);
  t.equal(report.total.series[0]!.t, new Date(fromS * 1000).toISOString());
  t.match(report.total.series[59], { accepted: 11, delivered: 9, retrying: 2, failed: 1 });
  t.match(report.total.series[30], { accepted: 0, delivered: 0, latencyP50Ms: null }, 'zero-filled');
  t.match(report.total.totals, { accepted: 16, delivered: 14, retrying: 2, failed: 1 }, 'a sum outside the window is left out');
  t.same(report.total.totals.attempts, { '2xx': 14, '3xx': 0, '4xx': 1, '5xx': 2, timeout: 0, network: 0, total: 17 });
  t.equal(report.total.totals.attemptShares['2xx'], 0.8235);
  t.ok(report.total.totals.latencyP50Ms! > 8 && report.total.totals.latencyP50Ms! < 12, 'p50 about 10 ms');
  t.ok(report.total.totals.latencyP99Ms! > 4000, 'p99: the slow one');
  t.same(report.queues.map((q) => q.name), ['a', 'b'], 'busiest first');
  t.equal(report.queues[1]!.totals.accepted, 6);
});
