import t from 'tap';
import type { DispatchResult } from '../../../../src/delivery/http/http-dispatcher.js';
import { TargetFlows, type FlowDefaults } from '../../../../src/delivery/flow/target-flows.js';
import type { RouteTarget } from '../../../../src/routing/route-table.js';
import type { TargetSettings } from '../../../../src/routing/target-settings.js';

const defaults: FlowDefaults = { maxConcurrency: 1000, maxRatePerSecond: 0, initialConcurrency: 16, maxPauseMs: 60_000 };

function target(id: string, url: string, settings: Partial<TargetSettings> = {}): RouteTarget {
  return { id, publicId: `tgt_${id}`, name: id, url: new URL(url), settings: { auth: { mode: 'none' }, staticHeaders: {}, timeoutMs: 10_000, ...settings }, disabled: false };
}
const ok: DispatchResult = { kind: 'response', status: 200, headers: {}, body: Buffer.alloc(0), durationMs: 5 };
const tooMany = (retryAfter?: string): DispatchResult => ({ kind: 'response', status: 429, headers: retryAfter ? { 'retry-after': retryAfter } : {}, body: Buffer.alloc(0), durationMs: 5 });
const timedOut: DispatchResult = { kind: 'error', code: 'ETIMEDOUT', error: 'no complete response within 10000 ms', durationMs: 10_000 };

t.test('a saturated target holds back only its own attempts', async (t) => {
  const flows = new TargetFlows(defaults);
  t.teardown(() => flows.close());
  const slow = target('slow', 'http://127.0.0.1:9001/', { maxConcurrency: 1 });
  const fast = target('fast', 'http://127.0.0.1:9002/');
  t.ok(flows.tryAcquire(slow));
  t.equal(flows.tryAcquire(slow), null, 'the slow target is at its maxConcurrency');
  for (let i = 0; i < 16; i++) t.ok(flows.tryAcquire(fast), `fast attempt ${i + 1} starts at once`);
});

t.test('waiting attempts start in arrival order as permits come back', async (t) => {
  const flows = new TargetFlows(defaults);
  t.teardown(() => flows.close());
  const one = target('one', 'http://127.0.0.1:9001/', { maxConcurrency: 1 });
  const first = flows.tryAcquire(one)!;
  const order: number[] = [];
  const second = flows.acquire(one).then((p) => (order.push(2), p));
  const third = flows.acquire(one).then((p) => (order.push(3), p));
  await new Promise((r) => setImmediate(r));
  t.same(order, [], 'nobody starts while the only permit is out');
  flows.release(first, ok, 10_000);
  const p2 = await second;
  await new Promise((r) => setImmediate(r));
  t.same(order, [2], 'one permit back, one attempt started');
  flows.release(p2, ok, 10_000);
  flows.release(await third, ok, 10_000);
  t.same(order, [2, 3]);
});

t.test('timeouts and 429 shrink the limit, fast answers under load grow it', async (t) => {
  const flows = new TargetFlows(defaults);
  t.teardown(() => flows.close());
  const a = target('a', 'http://127.0.0.1:9001/');
  const permits = Array.from({ length: 16 }, () => flows.tryAcquire(a)!);
  t.equal(flows.tryAcquire(a), null, 'initialConcurrency 16');
  flows.release(permits.pop()!, timedOut, 10_000);
  t.equal(flows.limitOf('a'), 8);
  // Answers to requests started before that decrease do not halve again.
  flows.release(permits.pop()!, tooMany(), 10_000);
  t.equal(flows.limitOf('a'), 8);
  for (const p of permits) flows.release(p, ok, 10_000);
  const b = target('b', 'http://127.0.0.1:9001/');
  const held = Array.from({ length: 16 }, () => flows.tryAcquire(b)!);
  for (const p of held) flows.release(p, ok, 10_000);
  t.ok(flows.limitOf('b')! > 16, `grew to ${flows.limitOf('b')}`);
  const slowAnswer: DispatchResult = { ...ok, durationMs: 6_000 };
  const c = target('c', 'http://127.0.0.1:9003/');
  for (const p of Array.from({ length: 16 }, () => flows.tryAcquire(c)!)) flows.release(p, slowAnswer, 10_000);
  t.equal(flows.limitOf('c'), 16, 'answers taking over half the deadline do not earn more');
  t.same(Object.fromEntries(flows.limitsByOrigin()), { 'http://127.0.0.1:9001': flows.limitOf('a')! + flows.limitOf('b')!, 'http://127.0.0.1:9003': 16 }, 'targets of one origin added up');
});

t.test('a 429 with Retry-After pauses the target (bounded by maxPauseMs), then waiting attempts go', async (t) => {
  const flows = new TargetFlows({ ...defaults, maxPauseMs: 30 });
  t.teardown(() => flows.close());
  const a = target('a', 'http://127.0.0.1:9001/');
  const other = target('other', 'http://127.0.0.1:9001/');
  flows.release(flows.tryAcquire(a)!, tooMany('120'), 10_000);
  t.equal(flows.tryAcquire(a), null, 'paused although far below its limit');
  t.ok(flows.tryAcquire(other), 'another target of the same origin is not paused');
  const waited = await flows.acquire(a);
  t.ok(waited, 'the pause ended after maxPauseMs, not 120 s');
});

t.test('maxConcurrency saved since applies to the next attempt', async (t) => {
  const flows = new TargetFlows(defaults);
  t.teardown(() => flows.close());
  const before = target('a', 'http://127.0.0.1:9001/');
  t.ok(flows.tryAcquire(before));
  const after = target('a', 'http://127.0.0.1:9001/', { maxConcurrency: 1 });
  t.equal(flows.tryAcquire(after), null);
  t.equal(flows.limitOf('a'), 1);
});

t.test('a withdrawn wait gives its place up: it rejects, takes no permit, and the next in line gets the one that comes back', async (t) => {
  const flows = new TargetFlows(defaults);
  t.teardown(() => flows.close());
  const one = target('one', 'http://127.0.0.1:9001/', { maxConcurrency: 1 });
  const held = flows.tryAcquire(one)!;
  t.notOk(flows.saturated('one'), 'at its limit, but nobody waits yet');
  const withdraw = new AbortController();
  const first = flows.acquire(one, withdraw.signal);
  const second = flows.acquire(one);
  t.ok(flows.saturated('one'), 'attempts wait for a permit');
  withdraw.abort();
  await t.rejects(first, { name: 'PermitWithdrawn' });
  t.ok(flows.saturated('one'), 'the second still waits');
  flows.release(held, ok, 10_000);
  const p2 = await second;
  t.notOk(flows.saturated('one'), 'the withdrawn wait took no permit: the queue is empty');
  t.equal(flows.tryAcquire(one), null, 'the second holds the only permit');
  flows.release(p2, ok, 10_000);
  t.ok(flows.tryAcquire(one), 'and gave it back');
});

t.test('aborting after the permit was granted changes nothing; an aborted signal never queues', async (t) => {
  const flows = new TargetFlows(defaults);
  t.teardown(() => flows.close());
  const one = target('one', 'http://127.0.0.1:9001/', { maxConcurrency: 1 });
  const held = flows.tryAcquire(one)!;
  const withdraw = new AbortController();
  const waiting = flows.acquire(one, withdraw.signal);
  flows.release(held, ok, 10_000);
  const permit = await waiting;
  withdraw.abort();
  t.equal(flows.tryAcquire(one), null, 'the granted permit is still held');
  t.notOk(flows.saturated('one'));
  const gone = new AbortController();
  gone.abort();
  await t.rejects(flows.acquire(one, gone.signal), { name: 'PermitWithdrawn' });
  t.notOk(flows.saturated('one'), 'nothing was queued');
  flows.release(permit, ok, 10_000);
});
