import t from 'tap';
import { DueQueue } from '../../../src/delivery/due-queue.js';

t.test('items fire at their due time, never before, earliest first', async (t) => {
  // Order and "not early" only: how late a timer fires depends on the machine's load.
  const fired: Array<[string, number]> = [];
  const q = new DueQueue<string>((item) => fired.push([item, Date.now()]));
  const now = Date.now();
  const due: Record<string, number> = { c: now + 90, a: now + 10, b: now + 50, past: now - 1000 };
  for (const item of ['c', 'a', 'b', 'past']) q.schedule(item, due[item]!);
  t.equal(q.size, 4);
  for (const until = Date.now() + 5_000; fired.length < 4 && Date.now() < until; ) await new Promise((r) => setTimeout(r, 10));
  t.same(fired.map(([item]) => item), ['past', 'a', 'b', 'c']);
  for (const [item, at] of fired) t.ok(at >= due[item]!, `${item} not before its due time`);
  t.equal(q.size, 0);
});

t.test('clear drops everything', async (t) => {
  const fired: string[] = [];
  const q = new DueQueue<string>((item) => fired.push(item));
  q.schedule('x', Date.now() + 10);
  q.clear();
  await new Promise((r) => setTimeout(r, 40));
  t.same(fired, []);
});

t.test('many items keep heap order', async (t) => {
  let clock = 0;
  const fired: number[] = [];
  const q = new DueQueue<number>((item) => fired.push(item), () => clock);
  const dues = Array.from({ length: 500 }, (_, i) => (i * 7919) % 1000);
  for (const d of dues) q.schedule(d, d + 1_000_000);
  clock = 2_000_000;
  q.schedule(-1, 0); // arms a timer that fires at once
  await new Promise((r) => setTimeout(r, 20));
  t.same(fired, [-1, ...[...dues].sort((a, b) => a - b)]);
});
