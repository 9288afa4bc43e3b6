import t from 'tap';
import { simulateAttempt } from '../../../src/delivery/sandbox.js';
import { FAIL_EVERY_ATTEMPT, readSandboxParams } from '../../../src/ingress/sandbox-query.js';

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
  t.same([1, 5, 50].map((n) => statusOf(readSandboxParams('sb_fail_code=503'), n)), [503, 503, 503]);
  t.equal(readSandboxParams('sb_fail_code=503').failCount, FAIL_EVERY_ATTEMPT);
  t.equal(statusOf(readSandboxParams(''), 1), 200);
});

t.test('sb_fail_count=0 fails no attempt, whatever sb_fail_code says', async (t) => {
  t.same([1, 2].map((n) => statusOf(readSandboxParams('sb_fail_code=503&sb_fail_count=0'), n)), [200, 200]);
});
