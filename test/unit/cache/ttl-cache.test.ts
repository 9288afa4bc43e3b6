import t from 'tap';
import { setTimeout as sleep } from 'node:timers/promises';
import { TtlCache } from '../../../src/cache/ttl-cache.js';

/** A promise with its resolve/reject exposed, to hold a loader open. */
function deferred<V>() {
  let resolve!: (v: V) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<V>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

t.test('set/get/delete', async (t) => {
  const c = new TtlCache<string>(10_000);
  t.equal(c.get('a'), undefined);
  c.set('a', 'A');
  t.equal(c.get('a'), 'A');
  c.set('a', 'A2');
  t.equal(c.get('a'), 'A2', 'overwrite');
  c.delete('a');
  t.equal(c.get('a'), undefined);
});

t.test('entries expire after the TTL', async (t) => {
  const c = new TtlCache<string>(30);
  c.set('a', 'A');
  t.equal(c.get('a'), 'A', 'fresh');
  await sleep(60);
  t.equal(c.get('a'), undefined, 'expired');
});

t.test('an expired entry is loaded again', async (t) => {
  const c = new TtlCache<number>(30);
  let calls = 0;
  const load = async () => ++calls;
  t.equal(await c.getOrLoad('k', load), 1);
  t.equal(await c.getOrLoad('k', load), 1, 'cached while fresh');
  await sleep(60);
  t.equal(await c.getOrLoad('k', load), 2, 'reloaded after expiry');
});

t.test('the size cap evicts the oldest entry', async (t) => {
  const c = new TtlCache<number>(10_000, 3);
  c.set('a', 1);
  c.set('b', 2);
  c.set('c', 3);
  c.set('d', 4);
  t.equal(c.get('a'), undefined, 'oldest evicted');
  t.same([c.get('b'), c.get('c'), c.get('d')], [2, 3, 4], 'the rest stay');
  c.set('e', 5);
  t.equal(c.get('b'), undefined, 'next oldest evicted');
  t.equal(c.get('e'), 5);
});

t.test('getOrLoad coalesces concurrent loads of one key', async (t) => {
  const c = new TtlCache<string>(10_000);
  const gate = deferred<string>();
  let calls = 0;
  const load = () => {
    calls++;
    return gate.promise;
  };
  const all = Promise.all(Array.from({ length: 50 }, () => c.getOrLoad('k', load)));
  gate.resolve('V');
  t.same(await all, Array(50).fill('V'));
  t.equal(calls, 1, 'loader called once');
  t.equal(await c.getOrLoad('k', load), 'V', 'then served from cache');
  t.equal(calls, 1);
});

t.test('different keys load independently', async (t) => {
  const c = new TtlCache<string>(10_000);
  const loaded: string[] = [];
  const [a, b] = await Promise.all([
    c.getOrLoad('a', async () => (loaded.push('a'), 'A')),
    c.getOrLoad('b', async () => (loaded.push('b'), 'B')),
  ]);
  t.same([a, b], ['A', 'B']);
  t.same(loaded.sort(), ['a', 'b']);
});

t.test('clear() during a load keeps the stale value out of the cache', async (t) => {
  const c = new TtlCache<string>(10_000);
  const gate = deferred<string>();
  const first = c.getOrLoad('k', () => gate.promise);
  c.clear(); // e.g. a config write invalidated caches while the old value was being read
  gate.resolve('stale');
  t.equal(await first, 'stale', 'the caller that started the load still gets its answer');
  t.equal(c.get('k'), undefined, 'but it is not cached');
  t.equal(await c.getOrLoad('k', async () => 'fresh'), 'fresh', 'the next read loads again');
  t.equal(c.get('k'), 'fresh');
});

t.test('a loader rejection propagates to every waiter and is not cached', async (t) => {
  const c = new TtlCache<string>(10_000);
  const gate = deferred<string>();
  let calls = 0;
  const load = () => {
    calls++;
    return gate.promise;
  };
  const waiters = [c.getOrLoad('k', load), c.getOrLoad('k', load)];
  gate.reject(new Error('db down'));
  for (const w of waiters) await t.rejects(w, { message: 'db down' });
  t.equal(calls, 1);
  t.equal(c.get('k'), undefined);
  t.equal(await c.getOrLoad('k', async () => 'ok'), 'ok', 'the next call retries the load');
});

t.test('a throwing async loader is not cached', async (t) => {
  const c = new TtlCache<number>(10_000);
  await t.rejects(c.getOrLoad('k', async () => {
    throw new Error('boom');
  }), { message: 'boom' });
  t.equal(await c.getOrLoad('k', async () => 7), 7);
});

t.test('updating an existing key at capacity evicts nothing', async (t) => {
  const cache = new TtlCache<number>(10_000, 2);
  cache.set('a', 1);
  cache.set('b', 2);
  cache.set('b', 3);
  t.equal(cache.get('a'), 1);
  t.equal(cache.get('b'), 3);
});

t.test('a load started before clear() does not unregister a newer load', async (t) => {
  const cache = new TtlCache<number>(10_000);
  const first = deferred<number>();
  const second = deferred<number>();
  let calls = 0;
  const p1 = cache.getOrLoad('k', () => (calls++, first.promise));
  cache.clear();
  const p2 = cache.getOrLoad('k', () => (calls++, second.promise));
  first.resolve(1);
  await p1;
  const p3 = cache.getOrLoad('k', () => (calls++, Promise.resolve(99)));
  second.resolve(2);
  t.equal(await p2, 2);
  t.equal(await p3, 2, 'the third caller joined the pending second load');
  t.equal(calls, 2);
});
