import t from 'tap';
import { createHash } from 'node:crypto';
import type { CacheStore } from '../../../src/cache/cache-store.js';
import { MemoryCacheStore } from '../../../src/cache/memory-cache-store.js';
import { RedisCacheStore } from '../../../src/cache/redis-cache-store.js';
import { IdempotencyGate } from '../../../src/ingress/idempotency.js';
import { createLogger } from '../../../src/observability/logger.js';
import { REDIS_URL, uniqueSuffix } from '../../helpers/backends.js';

// The Idempotency-Key reservation protocol, on both cache adapters.
const adapters: Array<[string, () => CacheStore]> = [
  ['memory', () => new MemoryCacheStore()],
  ['redis', () => new RedisCacheStore(REDIS_URL, `sgtest:${uniqueSuffix()}:`, createLogger('silent'))],
];

for (const [name, make] of adapters) {
  t.test(`the reservation protocol on the ${name} cache`, async (t) => {
  const cache = make();
  t.teardown(() => cache.close());
  const gate = new IdempotencyGate(cache, { pendingTtlMs: 5_000, waitMs: 3_000 });

  t.test('a duplicate waits while the first is pending and answers only after commit', async (t) => {
    const winner = await gate.claim('q', 'k1', 'evt_first', 60);
    t.equal(winner.kind, 'won');
    let settled = false;
    const loser = gate.claim('q', 'k1', 'evt_second', 60).then((c) => {
      settled = true;
      return c;
    });
    await new Promise((r) => setTimeout(r, 300));
    t.notOk(settled, 'still waiting: the first event is not durable yet');
    if (winner.kind === 'won') await winner.commit();
    t.same(await loser, { kind: 'replay', eventId: 'evt_first' });
  });

  t.test('a winner that fails releases the key and a waiting duplicate takes over', async (t) => {
    const winner = await gate.claim('q', 'k2', 'evt_failed', 60);
    const loser = gate.claim('q', 'k2', 'evt_takeover', 60);
    await new Promise((r) => setTimeout(r, 100));
    if (winner.kind === 'won') await winner.release();
    const taken = await loser;
    t.equal(taken.kind, 'won', 'the duplicate became the winner: it will write its own event');
    if (taken.kind === 'won') await taken.commit();
    t.same(await gate.claim('q', 'k2', 'evt_third', 60), { kind: 'replay', eventId: 'evt_takeover' }, 'later duplicates get the id that was written');
  });

  t.test('a duplicate that waits too long gets 409 conflict, and a late release or commit never touches another reservation', async (t) => {
    const quick = new IdempotencyGate(cache, { pendingTtlMs: 5_000, waitMs: 200 });
    const winner = await quick.claim('q', 'k3', 'evt_slow', 60);
    await t.rejects(quick.claim('q', 'k3', 'evt_impatient', 60), { code: 'conflict', status: 409 });
    // Our reservation expired and another request took the key: our late
    // release or commit must leave its reservation alone.
    const cacheKey = `idem:q:${createHash('sha256').update('k3').digest('base64url')}`;
    t.equal(await cache.get(cacheKey), 'p:evt_slow', 'the key layout this test relies on');
    await cache.set(cacheKey, 'p:evt_other');
    if (winner.kind === 'won') {
      await winner.release();
      t.equal(await cache.get(cacheKey), 'p:evt_other', 'release left it');
      await winner.commit();
      t.equal(await cache.get(cacheKey), 'p:evt_other', 'commit left it');
    }
  });
  });
}
