import t from 'tap';
import { ConsumeBarrier } from '../../../../src/node/threads/consume-barrier.js';

const barrier = (members: number[]) => {
  const released: number[] = [];
  return { released, barrier: new ConsumeBarrier(members, (m) => released.push(m)) };
};

t.test('nobody joins until every thread has arrived; then all at once', async (t) => {
  const { barrier: b, released } = barrier([1, 2, 3]);
  const gathered = b.gather(10_000);
  b.arrive(2);
  b.arrive(1);
  await new Promise((resolve) => setImmediate(resolve));
  t.same(released, [], 'two of three arrived: nobody released');
  t.equal(b.isOpen, false);
  b.arrive(3);
  t.same(await gathered, [], 'nobody missing');
  t.same(released.sort(), [1, 2, 3]);
  t.equal(b.isOpen, true);
});

t.test('a thread arriving after the barrier opened (a restart) is let through at once', async (t) => {
  const { barrier: b, released } = barrier([1]);
  const gathered = b.gather(10_000);
  b.arrive(1);
  await gathered;
  b.arrive(1);
  t.same(released, [1, 1]);
});

t.test('a thread whose start failed is not waited for; arriving later it is let through', async (t) => {
  const { barrier: b, released } = barrier([1, 2]);
  const gathered = b.gather(10_000);
  b.arrive(1);
  b.excuse(2);
  t.same(await gathered, [2], 'thread 2 named as missing');
  t.same(released, [1]);
  b.arrive(2);
  t.same(released, [1, 2]);
});

t.test('excusing a thread that already arrived changes nothing', async (t) => {
  const { barrier: b, released } = barrier([1, 2]);
  const gathered = b.gather(10_000);
  b.arrive(1);
  b.excuse(1);
  let done = false;
  void gathered.then(() => (done = true));
  await new Promise((resolve) => setTimeout(resolve, 20));
  t.equal(done, false, 'still waiting for thread 2');
  b.arrive(2);
  await gathered;
  t.same(released.sort(), [1, 2]);
});

t.test('the wait is bounded: after waitMs the arrived join and the rest are named', async (t) => {
  const { barrier: b, released } = barrier([1, 2]);
  const gathered = b.gather(30);
  b.arrive(2);
  t.same(await gathered, [1]);
  t.same(released, [2]);
});

t.test('no other thread: the gather resolves at once', async (t) => {
  const { barrier: b } = barrier([]);
  t.same(await b.gather(10_000), []);
});

t.test('arrivals before the gather starts count', async (t) => {
  const { barrier: b, released } = barrier([1]);
  b.arrive(1);
  t.same(await b.gather(10_000), []);
  t.same(released, [1]);
});
