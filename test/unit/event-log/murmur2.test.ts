import t from 'tap';
import { randomBytes } from 'node:crypto';
import { compatibilityPartitioner, murmur2 } from '@platformatic/kafka';
import { murmur2 as ours, partitionOf } from '../../../src/event-log/murmur2.js';

/**
 * Our murmur2 must place every key where Kafka's Java client (and the
 * client library we used before) places it: a key that moved partition
 * would lose its order across the upgrade.
 */
t.test("Kafka's own test vectors (UtilsTest.testMurmur2)", async (t) => {
  const cases: Array<[string | number[], number]> = [
    ['21', -973932308],
    ['foobar', -790332482],
    ['a-little-bit-long-string', -985981536],
    ['a-little-bit-longer-string', -1486304829],
    ['lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8', -58897971],
    [[0x61, 0x62, 0x63], 479470107],
  ];
  for (const [input, expected] of cases) {
    const bytes = typeof input === 'string' ? Buffer.from(input) : Uint8Array.from(input);
    t.equal(ours(bytes), expected, JSON.stringify(input));
  }
});

t.test('the same hash and partition as the client library for every length and byte value', async (t) => {
  let differing = 0;
  let checked = 0;
  for (let length = 0; length <= 300; length++) {
    for (let n = 0; n < 30; n++) {
      const key = randomBytes(length);
      checked++;
      const partitions = 1 + (n % 64);
      if (ours(key) !== murmur2(key) || partitionOf(key, partitions) !== compatibilityPartitioner(undefined as never, key) % partitions) differing++;
    }
  }
  // Bytes >= 0x80 (negative in Java's signed bytes) and UTF-8 partition keys.
  for (const text of ['ключ-42', 'clé:é', '顧客-7', '🔑🔑🔑', 'order-00017']) {
    const key = Buffer.from(text);
    checked++;
    if (ours(key) !== murmur2(key)) differing++;
  }
  t.equal(differing, 0, `${checked} keys, none placed differently`);
});

t.test('an empty key hashes like Java', async (t) => {
  t.equal(ours(new Uint8Array(0)), murmur2(Buffer.alloc(0)));
});

t.test('a string key and a prefix of a scratch buffer hash as their bytes', async (t) => {
  t.equal(partitionOf('order-00017', 12), compatibilityPartitioner(undefined as never, Buffer.from('order-00017')) % 12);
  const scratch = Buffer.alloc(64, 0xff);
  scratch.write('foobar');
  t.equal(ours(scratch, 6), -790332482, "only the first 6 bytes: UtilsTest's 'foobar'");
});
