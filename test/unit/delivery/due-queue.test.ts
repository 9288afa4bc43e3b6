import t from 'tap';
import { DueQueue } from '../../../src/delivery/due-queue.js';

t.test('items fire at their due time, earliest first, with one timer', async (t) => {
  const fired: string[] = [];
  const q = new DueQueue<string>((item) => fired.push(item));
  const now = Date.now();
  q.schedule('c', now + 90);
  q.schedule('a', now + 10);
  q.schedule('b', now + 50);
  q.schedule('past', now - 1000);
  t.equal(q.size, 4);
  await new Promise((r) => setTimeout(r, 30));
  t.same(fired, ['past', 'a']);
  await new Promise((r) => setTimeout(r, 100));
  t.same(fired, ['past', 'a', 'b', 'c']);
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
