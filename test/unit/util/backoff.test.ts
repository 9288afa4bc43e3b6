import t from 'tap';
import { backoffDelay, jittered } from '../../../src/util/backoff.js';

t.test('the delay doubles from baseMs up to maxMs', async (t) => {
  const opts = { baseMs: 250, maxMs: 5_000 };
  t.same([0, 1, 2, 3, 4, 5, 6, 50].map((n) => backoffDelay(n, opts)), [250, 500, 1000, 2000, 4000, 5000, 5000, 5000]);
});

t.test('a huge n stays at the ceiling, a zero base stays zero', async (t) => {
  t.equal(backoffDelay(10_000, { baseMs: 100, maxMs: 1_000 }), 1_000);
  t.equal(backoffDelay(10_000, { baseMs: 0, maxMs: 1_000 }), 0);
  t.equal(backoffDelay(-1, { baseMs: 100, maxMs: 1_000 }), 100, 'a negative n counts as 0');
});

t.test('no jitter unless asked: the same n gives the same delay', async (t) => {
  t.equal(backoffDelay(3, { baseMs: 100, maxMs: 10_000 }, () => 0.99), 800);
  t.equal(backoffDelay(3, { baseMs: 100, maxMs: 10_000, jitter: 0 }, () => 0.99), 800);
});

t.test('jitter spreads the delay evenly within ±fraction, after the ceiling', async (t) => {
  const opts = { baseMs: 1_000, maxMs: 4_000, jitter: 0.2 };
  t.equal(backoffDelay(0, opts, () => 0), 800);
  t.equal(backoffDelay(0, opts, () => 0.5), 1_000);
  t.equal(Math.round(backoffDelay(0, opts, () => 1)), 1_200);
  t.equal(Math.round(backoffDelay(9, opts, () => 1)), 4_800, 'jitter applies to the capped delay');
  for (let i = 0; i < 1_000; i++) {
    const d = backoffDelay(1, opts);
    if (d < 1_600 || d > 2_400) t.fail(`out of range: ${d}`);
  }
});

t.test('jittered', async (t) => {
  t.equal(jittered(5_000, 0.2, () => 0), 4_000);
  t.equal(jittered(5_000, 0.2, () => 0.5), 5_000);
  t.equal(jittered(5_000, 0, () => 0.9), 5_000);
});
