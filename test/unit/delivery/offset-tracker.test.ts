import t from 'tap';
import { OffsetTracker } from '../../../src/delivery/offset-tracker.js';

/** Deterministic PRNG (mulberry32) so a failure can be replayed. */
function rng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let x = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

function shuffle<T>(items: T[], rand: () => number): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
  return items;
}

/** The spec, stated naively: lowest unfinished seen offset, else one past the highest seen. */
class NaiveModel {
  readonly seen: bigint[] = [];
  readonly done = new Set<bigint>();
  commitPoint(): bigint | null {
    if (this.seen.length === 0) return null;
    for (const o of this.seen) if (!this.done.has(o)) return o;
    return this.seen[this.seen.length - 1]! + 1n;
  }
}

t.test('nothing seen yet: no commit point', async (t) => {
  const tr = new OffsetTracker();
  t.equal(tr.commitPoint(), null);
  t.equal(tr.highestSeen, null);
});

t.test('commit point is the lowest unfinished offset', async (t) => {
  const tr = new OffsetTracker();
  for (const o of [10n, 11n, 12n, 13n, 14n]) tr.add(o);
  t.equal(tr.commitPoint(), 10n, 'nothing finished: resume at the first offset');
  tr.finish(10n);
  tr.finish(12n);
  tr.finish(13n);
  t.equal(tr.commitPoint(), 11n, '11 still running holds the commit point');
  tr.finish(11n);
  t.equal(tr.commitPoint(), 14n, 'finishing 11 releases 12 and 13 already done');
  tr.finish(14n);
  t.equal(tr.commitPoint(), 15n, 'all finished: one past the highest seen');
  t.equal(tr.highestSeen, 14n);
});

t.test('out-of-order finish never moves the commit point past unfinished work', async (t) => {
  const tr = new OffsetTracker();
  for (let o = 0n; o < 5n; o++) tr.add(o);
  tr.finish(4n);
  tr.finish(3n);
  tr.finish(1n);
  t.equal(tr.commitPoint(), 0n);
  tr.finish(0n);
  t.equal(tr.commitPoint(), 2n);
});

t.test('gaps in offsets (e.g. compacted topics) are skipped', async (t) => {
  const tr = new OffsetTracker();
  tr.add(100n);
  tr.add(105n);
  tr.add(230n);
  tr.finish(100n);
  t.equal(tr.commitPoint(), 105n);
  tr.finish(230n);
  t.equal(tr.commitPoint(), 105n);
  tr.finish(105n);
  t.equal(tr.commitPoint(), 231n);
});

t.test('new offsets after everything finished become the commit point', async (t) => {
  const tr = new OffsetTracker();
  tr.add(7n);
  tr.finish(7n);
  t.equal(tr.commitPoint(), 8n);
  tr.add(8n);
  t.equal(tr.commitPoint(), 8n, 'the newly seen offset is unfinished');
});

t.test('10 000 offsets finished in random order match the naive model (crosses compaction)', async (t) => {
  const rand = rng(42);
  const tr = new OffsetTracker();
  const model = new NaiveModel();
  const base = 5_000_000_000n; // beyond 2^32, as real offsets can be
  const offsets: bigint[] = [];
  let o = base;
  for (let i = 0; i < 10_000; i++) {
    offsets.push(o);
    o += rand() < 0.1 ? 3n : 1n; // occasional gaps, still increasing
  }
  for (const off of offsets) {
    tr.add(off);
    model.seen.push(off);
  }
  let mismatches = 0;
  for (const off of shuffle([...offsets], rand)) {
    tr.finish(off);
    model.done.add(off);
    if (tr.commitPoint() !== model.commitPoint()) mismatches++;
  }
  t.equal(mismatches, 0, 'commit point equals the model after every finish');
  t.equal(tr.commitPoint(), offsets[offsets.length - 1]! + 1n);
});

t.test('interleaved adds and finishes with a mostly-in-order workload match the naive model', async (t) => {
  const rand = rng(7);
  const tr = new OffsetTracker();
  const model = new NaiveModel();
  const unfinished: bigint[] = [];
  let next = 0n;
  let mismatches = 0;
  let steps = 0;
  while (next < 20_000n || unfinished.length > 0) {
    steps++;
    if (next < 20_000n && (unfinished.length === 0 || rand() < 0.55)) {
      tr.add(next);
      model.seen.push(next);
      unfinished.push(next);
      next++;
    } else {
      // Usually finish one of the oldest few (so the head advances past 4096 and compaction runs).
      const window = Math.min(unfinished.length, rand() < 0.9 ? 4 : unfinished.length);
      const [o] = unfinished.splice(Math.floor(rand() * window), 1);
      tr.finish(o!);
      model.done.add(o!);
    }
    if (steps % 25 === 0 && tr.commitPoint() !== model.commitPoint()) mismatches++;
  }
  t.equal(mismatches, 0);
  t.equal(tr.commitPoint(), 20_000n);
  t.equal(tr.pending, 0, 'nothing pending once all is finished');
});
