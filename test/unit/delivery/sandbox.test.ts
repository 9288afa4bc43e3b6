import t from 'tap';
import { simulateAttempt } from '../../../src/delivery/sandbox.js';

const statusOf = (spec: Parameters<typeof simulateAttempt>[0], attempt: number) => {
  const r = simulateAttempt(spec, attempt);
  return r.kind === 'response' ? r.status : -1;
};

t.test('sb_fail_count alone fails the first N attempts with 500', async (t) => {
  const spec = { failCode: null, failCount: 2, runId: null };
  t.same([1, 2, 3, 4].map((n) => statusOf(spec, n)), [500, 500, 200, 200]);
});

t.test('sb_fail_code with a count fails the first N attempts with that code', async (t) => {
  const spec = { failCode: 429, failCount: 1, runId: 'run_1' };
  t.same([1, 2].map((n) => statusOf(spec, n)), [429, 200]);
});

t.test('sb_fail_code alone fails every attempt; neither succeeds at once', async (t) => {
  t.same([1, 5, 50].map((n) => statusOf({ failCode: 503, failCount: 0, runId: null }, n)), [503, 503, 503]);
  t.equal(statusOf({ failCode: null, failCount: 0, runId: null }, 1), 200);
});
