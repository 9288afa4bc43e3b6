import t from 'tap';
import { latencyBucket } from '../../../src/stats/latency-buckets.js';
import { Rollup, ROLLUP_COUNTERS, rowsOf } from '../../../src/stats/rollup.js';

const MIN = 60_000;
const T0 = Date.UTC(2026, 10, 27, 9, 0, 0);
const counts = (values: Partial<Record<(typeof ROLLUP_COUNTERS)[number], number>>) => ROLLUP_COUNTERS.map((c) => values[c] ?? 0);

t.test('counts per workspace, queue and minute', async (t) => {
  const r = new Rollup();
  r.accepted('ten_a', 'orders', T0 + 1_000);
  r.accepted('ten_a', 'orders', T0 + 59_999);
  r.accepted('ten_a', 'orders', T0 + MIN);
  r.accepted('ten_b', 'orders', T0);
  r.attempt('ten_a', 'orders', T0 + 5_000, 'delivered', '2xx', 12);
  r.attempt('ten_a', 'orders', T0 + 6_000, 'retry', '5xx', null);
  r.attempt('ten_a', 'orders', T0 + 7_000, 'retry', 'timeout', null);
  r.attempt('ten_a', 'orders', T0 + 8_000, 'failed', '4xx', null);
  r.attempt('ten_a', 'orders', T0 + 9_000, 'retry', 'network', null);
  t.equal(r.size, 3);
  const cells = r.take();
  t.equal(r.size, 0, 'taking empties it');
  const first = cells.find((c) => c.tenant === 'ten_a' && c.at === T0 / 1000)!;
  t.same(first.counts, counts({ accepted: 2, delivered: 1, retrying: 3, failed: 1, attempts2xx: 1, attempts4xx: 1, attempts5xx: 1, attemptsTimeout: 1, attemptsNetwork: 1 }));
  t.equal(first.latency![latencyBucket(12)], 1, 'the delivery\'s latency');
  t.same(cells.find((c) => c.at === (T0 + MIN) / 1000)!.counts, counts({ accepted: 1 }), 'the next minute');
  t.equal(cells.find((c) => c.tenant === 'ten_b')!.latency, null, 'no histogram until something is delivered');
});

t.test('cells put back after a failed flush add to what was counted since', async (t) => {
  const r = new Rollup();
  r.accepted('ten_a', 'q', T0);
  r.attempt('ten_a', 'q', T0, 'delivered', '2xx', 3);
  const failed = r.take();
  r.accepted('ten_a', 'q', T0 + 1);
  r.attempt('ten_a', 'q', T0 + 2, 'delivered', '2xx', 3);
  r.putBack(failed);
  const [cell] = r.take();
  t.same(cell!.counts, counts({ accepted: 2, delivered: 2, attempts2xx: 2 }));
  t.equal(cell!.latency![latencyBucket(3)], 2);
});

t.test('rows: minutes as counted, hours summed, histograms trimmed', async (t) => {
  const r = new Rollup();
  for (let m = 0; m < 3; m++) {
    r.accepted('ten_a', 'q', T0 + m * MIN);
    r.attempt('ten_a', 'q', T0 + m * MIN, 'delivered', '2xx', 1.2);
  }
  r.accepted('ten_a', 'q', T0 + 60 * MIN);
  const cells = r.take();
  const minutes = rowsOf(cells, 60);
  t.equal(minutes.length, 4);
  const hours = rowsOf(cells, 3600);
  t.same(hours.map((h) => [h.at, h.counts[0], h.counts[1]]), [[T0 / 1000, 3, 3], [T0 / 1000 + 3600, 1, 0]]);
  t.same(hours[0]!.latency, [0, 3], 'three deliveries of 1.2 ms (bucket [1, 1.41) ms), nothing after their bucket');
  t.same(hours[1]!.latency, []);
  t.same(cells[0]!.counts[0], 1, 'rows are copies: the cells are unchanged');
});
