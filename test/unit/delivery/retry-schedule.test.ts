import t from 'tap';
import fc from 'fast-check';
import { compressed, nextAttemptAt } from '../../../src/delivery/retry-schedule.js';

const DEFAULT = { scheduleSeconds: [5, 30, 120, 600, 1800, 3600, 10800, 21600, 43200], horizonSeconds: 259_200, retryableStatuses: [] };
const noJitter = () => 0.5;

t.test('the default schedule of docs/delivery.md#delivery-engine: 5 s, 30 s, 2 m, 10 m, 30 m, 1 h, 3 h, 6 h, then every 12 h up to 72 h', async (t) => {
  const start = 1_000_000;
  let now = start;
  const delays: number[] = [];
  for (let attempts = 1; ; attempts++) {
    const due = nextAttemptAt(DEFAULT, attempts, start, now, null, noJitter);
    if (due === null) break;
    delays.push((due - now) / 1000);
    now = due;
  }
  t.same(delays.slice(0, 9), [5, 30, 120, 600, 1800, 3600, 10800, 21600, 43200]);
  t.ok(delays.slice(9).every((d) => d === 43200), 'then 12 h each');
  const last = start + delays.reduce((a, b) => a + b, 0) * 1000;
  t.ok(last <= start + 72 * 3600_000, 'no attempt after 72 h');
  t.ok(last + 43200_000 > start + 72 * 3600_000, 'and the next would be past it');
  t.equal(delays.length + 1, 14, '14 attempts in all');
});

t.test('jitter stays within ±20 %', async (t) => {
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 20 }), fc.double({ min: 0, max: 0.999999, noNaN: true }), (attempts, r) => {
      const due = nextAttemptAt(DEFAULT, attempts, 0, 0, null, () => r);
      const step = DEFAULT.scheduleSeconds[Math.min(attempts, 9) - 1]! * 1000;
      return due === null || (due >= step * 0.8 - 1 && due <= step * 1.2 + 1);
    }),
  );
  t.equal(nextAttemptAt(DEFAULT, 1, 0, 0, null, () => 0), 4000);
  t.equal(nextAttemptAt(DEFAULT, 1, 0, 0, null, () => 0.999999), 6000);
});

t.test('Retry-After wins when it asks for longer', async (t) => {
  t.equal(nextAttemptAt(DEFAULT, 1, 0, 0, 60_000, noJitter), 60_000);
  t.equal(nextAttemptAt(DEFAULT, 1, 0, 0, 1_000, noJitter), 5_000, 'a shorter Retry-After does not shorten the schedule');
  t.equal(nextAttemptAt(DEFAULT, 1, 0, 0, 300 * 3600_000, noJitter), null, 'past the horizon: failed');
});

t.test('the horizon counts from the first attempt', async (t) => {
  const policy = { scheduleSeconds: [10], horizonSeconds: 25, retryableStatuses: [] };
  t.equal(nextAttemptAt(policy, 1, 0, 1_000, null, noJitter), 11_000);
  t.equal(nextAttemptAt(policy, 2, 0, 11_000, null, noJitter), 21_000);
  t.equal(nextAttemptAt(policy, 3, 0, 21_000, null, noJitter), null);
  t.equal(nextAttemptAt({ ...policy, horizonSeconds: 0 }, 1, 0, 0, null, noJitter), null, 'horizon 0: no retries');
});

t.test('compressed divides every duration (sandbox runs)', async (t) => {
  t.same(compressed(DEFAULT, 1000).scheduleSeconds.slice(0, 2), [0.005, 0.03]);
  t.equal(compressed(DEFAULT, 1000).horizonSeconds, 259.2);
  t.same(compressed(DEFAULT, 1), DEFAULT);
});
