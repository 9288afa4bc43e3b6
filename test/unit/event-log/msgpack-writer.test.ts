import t from 'tap';
import fc from 'fast-check';
import { Packr } from 'msgpackr';
import { decodeEvent, encodeEvent, type EventRecord } from '../../../src/event-log/event-record.js';
import { pack, type Packable } from '../../../src/event-log/msgpack-writer.js';

/*
 * The oracle is msgpackr itself, configured as event records were always
 * encoded: our writer must produce the very same bytes, so records written
 * before and after it are indistinguishable to every reader.
 */
const msgpackr = new Packr({ useRecords: false, moreTypes: false });

const text = fc.string({ unit: 'grapheme', maxLength: 40 });
const key = text.filter((k) => k !== '__proto__');

const scalar: fc.Arbitrary<Packable> = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.integer({ min: -0x80000000, max: 0xffffffff }),
  fc.constantFrom(0, 0x7f, 0x80, 0xff, 0x100, 0xffff, 0x10000, -0x20, -0x21, -0x80, -0x81, -0x8000, -0x8001, 2 ** 32, -(2 ** 31) - 1),
  fc.double({ noNaN: true }),
  fc.integer({ min: 0, max: 2 ** 53 - 1 }).map((n) => n + 1_700_000_000_000),
  text,
  fc.constantFrom(31, 32, 255, 256, 65_535, 65_536).map((n) => 'x'.repeat(n)),
  fc.constantFrom(10, 11, 85, 86, 21_845, 21_846).map((n) => 'é€'.repeat(n).slice(0, n)),
  fc.uint8Array({ maxLength: 300 }).map((a) => Buffer.from(a)),
  fc.constantFrom(255, 256, 65_535, 65_536).map((n) => Buffer.alloc(n, 7)),
);

const { value } = fc.letrec<{ value: Packable }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    scalar,
    fc.array(tie('value'), { maxLength: 18 }),
    fc.dictionary(key, tie('value'), { maxKeys: 18 }),
  ),
}));

t.test('writes the same bytes as msgpackr for every value an event record can hold', async (t) => {
  fc.assert(
    fc.property(value, (v) => {
      const ours = pack(v);
      const theirs = msgpackr.pack(v);
      if (!ours.equals(theirs)) throw new Error(`differs: ${ours.length} vs ${theirs.length} bytes, first difference at ${ours.findIndex((b, i) => b !== theirs[i])}`);
    }),
    { numRuns: 2000 },
  );
  t.pass('2000 random values byte-identical');
});

t.test('header boundaries: every size class of string, bin, array and map', async (t) => {
  const cases: Array<[string, Packable]> = [
    ['fixstr 31', 'a'.repeat(31)],
    ['str8 32', 'a'.repeat(32)],
    ['fixstr 31 bytes from 2-byte characters (under 32 characters)', 'é'.repeat(15) + 'a'],
    ['str8 32 bytes from 16 two-byte characters (under 32 characters: the bytes move)', 'é'.repeat(16)],
    ['str8 from 31 characters beyond ASCII', '€'.repeat(31)],
    ['str8 from surrogate pairs (14 characters, 28 bytes, and more ASCII)', '😀'.repeat(7) + 'a'.repeat(10)],
    ['str8 63 characters, 189 bytes', '€'.repeat(63)],
    ['str8 64 characters (the long path)', 'b'.repeat(64)],
    ['str8 255 bytes from 3-byte characters', '€'.repeat(85)],
    ['str16 256 bytes', '€'.repeat(85) + 'a'],
    ['str32', 'a'.repeat(70_000)],
    ['bin8', Buffer.alloc(255)],
    ['bin16', Buffer.alloc(256)],
    ['bin32', Buffer.alloc(70_000)],
    ['fixarray 15', Array.from({ length: 15 }, () => 1)],
    ['array16', Array.from({ length: 16 }, () => 1)],
    ['map of 20', Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`k${i}`, i]))],
  ];
  for (const [name, v] of cases) t.ok(pack(v).equals(msgpackr.pack(v)), name);
});

function record(i: number, body: Buffer): EventRecord {
  return {
    v: 1,
    id: `evt_${i}`,
    tenantPublicId: 'ten_x',
    workspaceId: '42',
    queueId: 'que_1',
    queueName: 'orders',
    receivedAt: 1_763_700_000_000 + i,
    contentType: 'application/json',
    idempotencyKey: i % 2 ? `idem-${i}` : null,
    eventType: 'commande.créée',
    groupKey: null,
    partitionKey: `key-${i % 7}`,
    path: null,
    body,
    ...(i % 3 === 0 ? { mappedHeaders: [['x-a', 'b'] as [string, string]] } : {}),
    ...(i % 5 === 0 ? { sandbox: { failCode: 503, failCount: 2, runId: null } } : {}),
    ...(i % 4 === 0 ? { paymentsRecalc: true } : {}),
  };
}

t.test('records stay whole while later ones are written (chunks are never reused)', async (t) => {
  const kept: Array<[EventRecord, Buffer]> = [];
  // Bodies from 0 B to 200 KB: many chunk changes, and records larger than a chunk.
  for (let i = 0; i < 600; i++) {
    const r = record(i, Buffer.alloc(i % 50 === 0 ? 200_000 : i * 13, i & 0xff));
    kept.push([r, encodeEvent(r)]);
  }
  let same = 0;
  for (const [r, bytes] of kept) {
    if (bytes.equals(msgpackr.pack(r)) && decodeEvent(bytes).body.equals(r.body)) same++;
  }
  t.equal(same, kept.length, 'every record still decodes to itself and matches msgpackr');
  t.same(decodeEvent(kept[15]![1]), kept[15]![0], 'decoded field by field');
});

t.test('strings carry the UTF-8 bytes Buffer makes, lone surrogates as U+FFFD', async (t) => {
  fc.assert(
    fc.property(fc.string({ unit: 'binary', maxLength: 120 }), (s) => {
      const utf8 = Buffer.from(s, 'utf8');
      const ours = pack(s);
      if (!ours.subarray(ours.length - utf8.length).equals(utf8)) throw new Error(`bytes differ for ${JSON.stringify(s)}`);
      if (msgpackr.unpack(ours) !== utf8.toString()) throw new Error('does not read back');
    }),
    { numRuns: 2000 },
  );
  t.equal(msgpackr.unpack(pack('a\ud800b')), 'a\ufffdb', 'a lone high surrogate');
  t.equal(msgpackr.unpack(pack('\udc00')), '\ufffd', 'a lone low surrogate');
  t.equal(msgpackr.unpack(pack('😀é')), '😀é', 'a pair and a 2-byte character');
});
