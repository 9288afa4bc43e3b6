import t from 'tap';
import { createRequire } from 'node:module';
import { randomBytes } from 'node:crypto';
import { crc32c } from '../../../src/log/crc32c.js';

// kafkajs's own (byte-at-a-time) CRC-32C: an independent oracle for ours.
const require = createRequire(import.meta.url);
const kafkajsCrc32c = require('kafkajs/src/protocol/recordBatch/crc32C') as (buf: Buffer) => number;

t.test('known vectors', async (t) => {
  t.equal(crc32c(Buffer.from('123456789')), 0xe3069283, 'the CRC-32C check value');
  t.equal(crc32c(Buffer.alloc(0)), 0, 'empty');
  t.equal(crc32c(Buffer.alloc(32, 0)), 0x8a9136aa, '32 zero bytes (RFC 3720 B.4)');
  t.equal(crc32c(Buffer.alloc(32, 0xff)), 0x62a8ab43, '32 0xff bytes (RFC 3720 B.4)');
  const ascending = Buffer.from(Array.from({ length: 32 }, (_, i) => i));
  t.equal(crc32c(ascending), 0x46dd794e, '00..1f (RFC 3720 B.4)');
});

t.test('a range of a buffer: same as the CRC of that slice', async (t) => {
  const buf = Buffer.from('xx123456789yy');
  t.equal(crc32c(buf, 2, 11), 0xe3069283);
  t.equal(crc32c(buf, 5, 5), 0, 'an empty range');
});

t.test('matches kafkajs on random buffers of every length up to 100 and random ones beyond', async (t) => {
  let mismatches = 0;
  for (let len = 0; len <= 100; len++) {
    const buf = randomBytes(len);
    if (crc32c(buf) !== kafkajsCrc32c(buf)) mismatches++;
  }
  for (let n = 0; n < 200; n++) {
    const buf = randomBytes(1 + Math.floor(Math.random() * 20_000));
    const start = Math.floor(Math.random() * buf.length);
    const end = start + Math.floor(Math.random() * (buf.length - start));
    if (crc32c(buf, start, end) !== kafkajsCrc32c(buf.subarray(start, end))) mismatches++;
  }
  t.equal(mismatches, 0, 'no mismatch');
});

t.test('the result is an unsigned 32-bit integer', async (t) => {
  const values = Array.from({ length: 200 }, () => crc32c(randomBytes(64)));
  t.ok(values.every((v) => Number.isInteger(v) && v >= 0 && v <= 0xffffffff));
  t.ok(values.some((v) => v >= 0x80000000), 'high-bit values stay positive');
});
