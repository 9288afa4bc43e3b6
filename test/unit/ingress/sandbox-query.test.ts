import t from 'tap';
import { FAIL_EVERY_ATTEMPT, hasSandboxParams, readSandboxParams } from '../../../src/ingress/sandbox-query.js';

t.test('hasSandboxParams sees each parameter, also percent-encoded, and nothing else', async (t) => {
  for (const q of ['sb_fail_code=500', 'a=1&sb_fail_count=2', 'runId=r', 'sb%5Ffail_code=1', 'runId', 'runId=']) t.ok(hasSandboxParams(q), q);
  for (const q of ['', 'a=1', 'runid=1', 'sb_fail=1', 'x=sb_fail_code']) t.notOk(hasSandboxParams(q), q);
});

t.test('readSandboxParams', async (t) => {
  t.same(readSandboxParams('sb_fail_code=503&sb_fail_count=2&runId=run_1'), { failCode: 503, failCount: 2, runId: 'run_1' });
  t.same(readSandboxParams('sb_fail_count=4'), { failCode: null, failCount: 4, runId: null }, 'delivery applies the default code 500');
  t.same(readSandboxParams('sb_fail_code=429'), { failCode: 429, failCount: FAIL_EVERY_ATTEMPT, runId: null }, 'a code alone fails every attempt');
  t.same(readSandboxParams(''), { failCode: null, failCount: 0, runId: null });
  for (const q of ['sb_fail_code=99', 'sb_fail_code=600', 'sb_fail_code=5e2', 'sb_fail_code=', 'sb_fail_count=-1', 'sb_fail_count=1001', 'runId=a%20b', `runId=${'r'.repeat(101)}`]) {
    t.throws(() => readSandboxParams(q), { code: 'validation_failed', status: 400 }, q);
  }
});
