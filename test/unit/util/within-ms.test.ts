import t from 'tap';
import { withinMs } from '../../../src/util/within-ms.js';

t.test('a promise that settles in time passes through', async (t) => {
  t.equal(await withinMs(Promise.resolve(7), 1_000), 7);
  await t.rejects(withinMs(Promise.reject(new Error('its own')), 1_000), { message: 'its own' });
});

t.test('one that does not is refused after the wait, and its late rejection goes nowhere', async (t) => {
  let fail: (err: Error) => void = () => {};
  const slow = new Promise<number>((_, reject) => (fail = reject));
  const started = Date.now();
  await t.rejects(withinMs(slow, 50), { message: 'no answer within 50 ms' });
  t.ok(Date.now() - started >= 45, 'waited about the time given');
  fail(new Error('too late')); // an unhandled rejection would fail this file
  await new Promise((r) => setTimeout(r, 20));
});
