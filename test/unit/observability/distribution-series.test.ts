import t from 'tap';
import { bucketStart, HISTORIES, isHistory, retentionSeconds, seriesBuckets } from '../../../src/observability/distribution-series.js';

t.test('histories: 1h in 60 s buckets, 24h in 900 s, 7d in 3600 s', async (t) => {
  t.same(HISTORIES['1h'], { windowSeconds: 3600, bucketSeconds: 60 });
  t.same(HISTORIES['24h'], { windowSeconds: 86_400, bucketSeconds: 900 });
  t.same(HISTORIES['7d'], { windowSeconds: 604_800, bucketSeconds: 3600 });
  for (const ok of ['1h', '24h', '7d']) t.ok(isHistory(ok), ok);
  for (const bad of ['', '1H', '2h', '30d', 'toString', '__proto__', '1h ']) t.notOk(isHistory(bad), JSON.stringify(bad));
});

t.test('a series covers the window, oldest first, ending with the current bucket', async (t) => {
  const now = Date.UTC(2026, 0, 15, 10, 30, 45);
  const hour = seriesBuckets('1h', now);
  t.equal(hour.length, 60);
  t.equal(hour.at(-1), Date.UTC(2026, 0, 15, 10, 30) / 1000, 'the current minute');
  t.equal(hour[0], Date.UTC(2026, 0, 15, 9, 31) / 1000);
  t.ok(hour.every((s, i) => i === 0 || s - hour[i - 1]! === 60), 'contiguous');
  const day = seriesBuckets('24h', now);
  t.equal(day.length, 96);
  t.equal(day.at(-1), Date.UTC(2026, 0, 15, 10, 30) / 1000, '10:30 starts a quarter hour');
  const week = seriesBuckets('7d', now);
  t.equal(week.length, 168);
  t.equal(week.at(-1), Date.UTC(2026, 0, 15, 10) / 1000);
});

t.test('bucket starts and retention', async (t) => {
  t.equal(bucketStart(3599, 60), 3540);
  t.equal(bucketStart(3600, 3600), 3600);
  t.equal(retentionSeconds(60), 3660, 'a minute bucket lives as long as the 1h series shows it');
  t.equal(retentionSeconds(3600), 604_800 + 3600);
});
