import t from 'tap';
import { setTimeout as sleep } from 'node:timers/promises';
import type { CacheStore } from '../../../src/cache/cache-store.js';
import { MemoryCacheStore } from '../../../src/cache/memory-cache-store.js';
import { RedisCacheStore } from '../../../src/cache/redis-cache-store.js';
import { createLogger } from '../../../src/observability/logger.js';
import { REDIS_URL, uniqueSuffix } from '../../helpers/backends.js';

// One contract, both adapters: what a node relies on must hold on Redis and in process.
const adapters: Array<[string, () => CacheStore]> = [
  ['memory', () => new MemoryCacheStore()],
  ['redis', () => new RedisCacheStore(REDIS_URL, `sgtest:${uniqueSuffix()}:`, createLogger('silent'))],
];

for (const [name, make] of adapters) {
  t.test(`${name} cache store`, async (t) => {
    const store = make();
    t.teardown(() => store.close());

    t.equal(await store.get('missing'), null);
    await store.set('a', '1');
    t.equal(await store.get('a'), '1');
    await store.delete('a');
    t.equal(await store.get('a'), null);

    await store.set('short', 'x', 50);
    await sleep(120);
    t.equal(await store.get('short'), null, 'values expire');

    t.equal(await store.setIfAbsent('nonce', 'first', 10_000), true);
    t.equal(await store.setIfAbsent('nonce', 'second', 10_000), false, 'set-if-absent refuses a live key');
    t.equal(await store.get('nonce'), 'first');
    const racers = await Promise.all(Array.from({ length: 20 }, (_v, i) => store.setIfAbsent('race', String(i), 10_000)));
    t.equal(racers.filter(Boolean).length, 1, 'exactly one of concurrent set-if-absent calls wins');
    // Calls of one turn may travel together (Redis): each keeps its own value and expiry, and order decides.
    t.same(
      await Promise.all([store.setIfAbsent('m1', 'a', 50), store.setIfAbsent('m2', 'b', 10_000), store.setIfAbsent('m1', 'c', 10_000)]),
      [true, true, false],
      'several keys at once: each set-if-absent answers for its own key, the first call for a key wins',
    );
    t.same([await store.get('m1'), await store.get('m2')], ['a', 'b'], 'each key holds the value its winning call gave');
    await sleep(120);
    t.same([await store.get('m1'), await store.get('m2')], [null, 'b'], 'each key expires after its own TTL');

    t.equal(await store.setIfEqualsOrAbsent('res', 'mine', 'done', 10_000), true, 'absent: set');
    t.equal(await store.setIfEqualsOrAbsent('res', 'other', 'stolen', 10_000), false, 'held by another value: refused');
    t.equal(await store.setIfEqualsOrAbsent('res', 'done', 'done2', 10_000), true, 'held by the expected value: replaced');
    t.equal(await store.get('res'), 'done2');
    t.equal(await store.deleteIfEquals('nonce', 'other'), false);
    t.equal(await store.get('nonce'), 'first');
    t.equal(await store.deleteIfEquals('nonce', 'first'), true);
    t.equal(await store.get('nonce'), null);

    t.equal(await store.incr('c'), 1);
    t.equal(await store.incr('c', 5), 6);
    await store.incr('d', 2, 10_000);
    t.same(await store.getCounters(['c', 'd', 'none']), [6, 2, 0]);
    await store.incr('e', 1, 50);
    await sleep(120);
    t.same(await store.getCounters(['e']), [0], 'counters with a TTL expire');

    const got: string[] = [];
    await store.subscribe('ch', (m) => got.push(m));
    await sleep(50);
    await store.publish('ch', 'hello');
    await store.publish('other', 'nope');
    const until = Date.now() + 2000;
    while (got.length === 0 && Date.now() < until) await sleep(10);
    t.same(got, ['hello'], 'subscribers get messages of their channel only');
  });
}

t.test('redis: when Redis cannot answer, every set-if-absent of the batch fails (none is reported as set)', async (t) => {
  const store = new RedisCacheStore(REDIS_URL, `sgtest:${uniqueSuffix()}:`, createLogger('silent'));
  t.equal(await store.setIfAbsent('n', '1', 10_000), true);
  await store.close();
  const outcomes = await Promise.allSettled([store.setIfAbsent('a', '1', 10_000), store.setIfAbsent('b', '1', 10_000)]);
  t.same(outcomes.map((o) => o.status), ['rejected', 'rejected']);
});
