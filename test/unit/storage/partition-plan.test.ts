import t from 'tap';
import {
  aheadMs, parsePartitionName, partitionName, partitionsToCreate, partitionsToDrop, partitionWidthMs, WIDTHS_S,
} from '../../../src/storage/partition-plan.js';

const H = 3_600_000;
const at = (iso: string) => Date.parse(iso);

t.test('width: the widest step within retention / 12, 10 s to a day', async (t) => {
  t.equal(partitionWidthMs(720 * H), 86_400_000, '30 days: daily (30 partitions)');
  t.equal(partitionWidthMs(24 * H), 7_200_000, 'a day: 2 h (12 partitions)');
  t.equal(partitionWidthMs(1 * H), 300_000, 'an hour: 5 min');
  t.equal(partitionWidthMs(0.02 * H), 10_000, '72 s: the smallest, 10 s');
  t.equal(partitionWidthMs(1_000_000 * H), 86_400_000, 'never wider than a day');
  for (const hours of [0.5, 2, 5, 7, 13, 48, 100, 300]) {
    const n = (hours * H) / partitionWidthMs(hours * H);
    t.ok(n >= 12 && n <= 30, `${hours} h: ${n} partitions over the retention`);
  }
  for (const w of WIDTHS_S) t.equal(86_400 % w, 0, `${w} s divides a day`);
});

t.test('ahead: three widths or three sweeps, whichever is longer', async (t) => {
  t.equal(aheadMs(86_400_000, 60_000), 3 * 86_400_000);
  t.equal(aheadMs(10_000, 60_000), 180_000);
});

t.test('names carry the range, UTC to the second, and parse back', async (t) => {
  const range = { fromMs: at('2026-11-27T05:16:00Z'), toMs: at('2026-11-27T05:16:10Z') };
  const name = partitionName('delivery_log', range);
  t.equal(name, 'delivery_log_p20261127t051600_20261127t051610');
  t.ok(name.length <= 63, 'fits a Postgres identifier');
  t.same(parsePartitionName('delivery_log', name), range);
  t.equal(parsePartitionName('event_log', name), null, 'another table\'s partition');
  t.equal(parsePartitionName('event_log', 'event_log_default'), null, 'DEFAULT has no range (never dropped)');
  t.equal(parsePartitionName('event_log', 'event_log_p20261127t051610_20261127t051600'), null, 'an empty range is not ours');
  // What migration 070 writes for existing rows: daily partitions.
  t.same(parsePartitionName('event_log', 'event_log_p20261126t000000_20261127t000000'), { fromMs: at('2026-11-26T00:00:00Z'), toMs: at('2026-11-27T00:00:00Z') });
});

t.test('to create: the gaps in [now rounded down, now + ahead], lined up on the width', async (t) => {
  const now = at('2026-11-27T05:16:07Z');
  const W = 10_000;
  t.same(partitionsToCreate([], now, W, 30_000).map((r) => new Date(r.fromMs).toISOString().slice(11, 19)), ['05:16:00', '05:16:10', '05:16:20', '05:16:30'], 'an empty table');
  const existing = [{ fromMs: at('2026-11-27T05:16:00Z'), toMs: at('2026-11-27T05:16:20Z') }];
  t.same(partitionsToCreate(existing, now, W, 30_000), [
    { fromMs: at('2026-11-27T05:16:20Z'), toMs: at('2026-11-27T05:16:30Z') },
    { fromMs: at('2026-11-27T05:16:30Z'), toMs: at('2026-11-27T05:16:40Z') },
  ], 'continues where the newest ends');
  t.same(partitionsToCreate([{ fromMs: now - 5000, toMs: now + 60_000 }], now, W, 30_000), [], 'covered: nothing');
  // retention.hours changed: the migration's daily partition ends at midnight, the sweep goes on in 2 h steps.
  const daily = [{ fromMs: at('2026-11-27T00:00:00Z'), toMs: at('2026-11-28T00:00:00Z') }];
  const next = partitionsToCreate(daily, at('2026-11-27T23:00:00Z'), 2 * H, 6 * H);
  t.same(next.map((r) => [new Date(r.fromMs).toISOString(), new Date(r.toMs).toISOString()]), [
    ['2026-11-28T00:00:00.000Z', '2026-11-28T02:00:00.000Z'],
    ['2026-11-28T02:00:00.000Z', '2026-11-28T04:00:00.000Z'],
    ['2026-11-28T04:00:00.000Z', '2026-11-28T06:00:00.000Z'],
  ], 'until 23:00 + 6 h is covered');
  // A width that does not line up with the newest end: the first new one is shortened to line up.
  const odd = partitionsToCreate([{ fromMs: 0, toMs: 25_000 }], 26_000, 10_000, 10_000);
  t.same(odd, [{ fromMs: 25_000, toMs: 30_000 }, { fromMs: 30_000, toMs: 40_000 }]);
  // Partitions stop at a gap in the past: rows there go to DEFAULT, the new ones start at now.
  t.same(partitionsToCreate([{ fromMs: 0, toMs: 10_000 }], 100_000, 10_000, 5_000), [{ fromMs: 100_000, toMs: 110_000 }]);
  // A partition made far ahead (a wrong clock) does not stop the ones for now.
  t.same(partitionsToCreate([{ fromMs: 1_000_000, toMs: 1_010_000 }], 100_000, 10_000, 15_000), [
    { fromMs: 100_000, toMs: 110_000 }, { fromMs: 110_000, toMs: 120_000 },
  ]);
  // Gaps between partitions are filled, up to where the next one starts.
  t.same(partitionsToCreate([{ fromMs: 100_000, toMs: 105_000 }, { fromMs: 115_000, toMs: 120_000 }], 101_000, 10_000, 25_000), [
    { fromMs: 105_000, toMs: 110_000 }, { fromMs: 110_000, toMs: 115_000 }, { fromMs: 120_000, toMs: 130_000 },
  ]);
});

t.test('to drop: only partitions whose newest possible record is past retention', async (t) => {
  const ranges = [
    { fromMs: 0, toMs: 10_000 },
    { fromMs: 10_000, toMs: 20_000 },
    { fromMs: 20_000, toMs: 30_000 },
  ];
  t.same(partitionsToDrop(ranges, 90_000, 72_000), [ranges[0]], 'ends at 10 s + 72 s <= 90 s; the next ends at 92 s');
  t.same(partitionsToDrop(ranges, 92_000, 72_000), [ranges[0], ranges[1]], 'exactly at its end + retention');
  t.same(partitionsToDrop(ranges, 50_000, 72_000), [], 'nothing yet');
});
