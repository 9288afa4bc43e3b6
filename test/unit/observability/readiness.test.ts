import t from 'tap';
import { setTimeout as sleep } from 'node:timers/promises';
import { Readiness, StillStarting } from '../../../src/observability/readiness.js';
import { createLogger } from '../../../src/observability/logger.js';

const log = createLogger('silent');
const fresh = (timeoutMs = 100) => new Readiness(['ingress'], { intervalMs: 60_000, timeoutMs }, log);

t.test('not ready until started and every check passed; the body names each check', async (t) => {
  const r = fresh();
  r.add('db', async () => ({ version: 16 }));
  t.equal(r.report().status, 'not_ready', 'nothing checked yet');
  await r.refresh();
  t.equal(r.report().status, 'not_ready', 'checks pass but the roles are not up');
  r.waiting('waiting for db: connect ECONNREFUSED');
  t.same(r.report().checks.startup, { ok: false, error: 'waiting for db: connect ECONNREFUSED' });
  r.started();
  const report = r.report();
  t.equal(report.status, 'ready');
  t.same(report.roles, ['ingress']);
  t.equal(report.checks.db!.ok, true);
  t.equal(report.checks.db!.version, 16, 'details a check returns are shown');
  t.type(report.checks.db!.latencyMs, 'number');
});

t.test('a failing check makes the node not ready with its cause, and ready again when it passes', async (t) => {
  const r = fresh();
  let up = false;
  r.add('cache', async () => {
    if (!up) throw new Error('connect ECONNREFUSED 127.0.0.1:6390');
  });
  r.started();
  await r.refresh();
  t.equal(r.report().status, 'not_ready');
  t.equal(r.report().checks.cache!.error, 'connect ECONNREFUSED 127.0.0.1:6390');
  up = true;
  await r.refresh();
  t.equal(r.report().status, 'ready');
});

t.test('a check that never answers fails at the timeout, is aborted, and is not piled up', async (t) => {
  const r = fresh(50);
  let calls = 0;
  let aborted = 0;
  r.add('broker', (signal) => {
    calls++;
    signal.addEventListener('abort', () => aborted++);
    return new Promise(() => {});
  });
  r.started();
  const began = Date.now();
  await Promise.all([r.refresh(), r.refresh(), r.refresh()]);
  t.ok(Date.now() - began < 1_000, 'the round does not wait on it');
  t.equal(calls, 1, 'rounds that overlap share one probe');
  t.equal(aborted, 1, 'the probe is told it ran out of time');
  t.same(r.report().checks.broker, { ok: false, latencyMs: 50, error: 'no answer within 50 ms' });
  await r.refresh();
  t.equal(calls, 2, 'the next round asks again');
});

t.test('reports are read from the last round: reading them runs nothing', async (t) => {
  const r = fresh();
  let calls = 0;
  r.add('db', async () => {
    calls++;
  });
  r.started();
  await r.refresh();
  for (let i = 0; i < 1000; i++) r.report();
  t.equal(calls, 1);
});

t.test('start() runs a round at once and then on the interval; stop() ends it', async (t) => {
  const r = new Readiness(['delivery'], { intervalMs: 30, timeoutMs: 20 }, log);
  let calls = 0;
  r.add('group', async () => {
    calls++;
  });
  r.start();
  await sleep(100);
  r.stop();
  const seen = calls;
  t.ok(seen >= 2, `ran ${seen} times`);
  await sleep(80);
  t.equal(calls, seen, 'no round after stop()');
});

t.test('draining wins over every check and is never undone', async (t) => {
  const r = fresh();
  r.add('db', async () => {});
  r.started();
  await r.refresh();
  r.setDraining();
  t.equal(r.report().status, 'draining');
  t.ok(r.isDraining);
  r.started();
  await r.refresh();
  t.equal(r.report().status, 'draining');
});

t.test('a check failing while its part is still starting is shown failing but not warned about; a real failure is', async (t) => {
  const lines: Array<{ level: number; msg: string; check?: string }> = [];
  const capture = createLogger('debug', 'test', { write: (line: string) => void lines.push(JSON.parse(line)) });
  const r = new Readiness(['ingress'], { intervalMs: 60_000, timeoutMs: 100 }, capture);
  let state: 'starting' | 'up' | 'broken' = 'starting';
  r.add('threads', async () => {
    if (state === 'starting') throw new StillStarting('thread 1 starting');
    if (state === 'broken') throw new Error('thread 1 down');
  });
  r.started();
  await r.refresh();
  await r.refresh();
  t.equal(r.report().status, 'not_ready', 'not ready while the threads start');
  t.equal(r.report().checks.threads!.error, 'thread 1 starting');
  const warned = () => lines.filter((l) => l.level >= 40).map((l) => l.msg);
  t.same(warned(), [], 'no warning for the start');
  t.equal(lines.filter((l) => l.msg === 'readiness check waits for the start').length, 1, 'one debug line, not one per round');
  state = 'up';
  await r.refresh();
  t.equal(r.report().status, 'ready');
  t.notOk(lines.some((l) => l.msg === 'readiness check passes again'), 'nothing "again" about a first pass');
  state = 'broken';
  await r.refresh();
  t.same(warned(), ['readiness check failed'], 'a failure after the start is warned about');
});

t.test('checks failing once the node drains are not warned about', async (t) => {
  const lines: Array<{ level: number; msg: string }> = [];
  const capture = createLogger('debug', 'test', { write: (line: string) => void lines.push(JSON.parse(line)) });
  const r = new Readiness(['ingress'], { intervalMs: 60_000, timeoutMs: 100 }, capture);
  let draining = false;
  r.add('threads', async () => {
    if (draining) throw new Error('thread 1 draining');
  });
  r.started();
  await r.refresh();
  r.setDraining();
  draining = true;
  await r.refresh();
  t.equal(r.report().status, 'draining');
  t.same(lines.filter((l) => l.level >= 40), [], 'no warning');
  t.ok(lines.some((l) => l.msg === 'readiness check fails while draining'), 'a debug line says what happened');
});
