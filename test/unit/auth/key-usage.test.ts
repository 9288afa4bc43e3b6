import t from 'tap';
import { KeyUsage } from '../../../src/auth/key-usage.js';
import { createLogger } from '../../../src/observability/logger.js';

t.test('a key is written at most once a minute, in batches; a failed write is noted again on the next use', async (t) => {
  let now = 1_000_000;
  const writes: string[][] = [];
  let fail = false;
  const usage = new KeyUsage(async (ids) => {
    if (fail) throw new Error('database away');
    writes.push([...ids].sort());
  }, createLogger('silent'), () => now);
  usage.used('key_a');
  usage.used('key_a');
  usage.used('key_b');
  await usage.flush();
  t.same(writes, [['key_a', 'key_b']], 'one batch, each key once');
  now += 30_000;
  usage.used('key_a');
  await usage.flush();
  t.equal(writes.length, 1, 'within the minute: not written again');
  now += 31_000;
  fail = true;
  usage.used('key_a');
  await usage.flush();
  fail = false;
  usage.used('key_a');
  await usage.flush();
  t.same(writes.at(-1), ['key_a'], 'after a failed write the next use writes it');
  await usage.stop();
});
