import t from 'tap';
import { randomBytes } from 'node:crypto';
import { Packr } from 'msgpackr';
import { decodeEvent, encodeEvent, type EventRecord } from '../../../src/event-log/event-record.js';

const record = (over: Partial<EventRecord> = {}): EventRecord => ({
  v: 1,
  id: 'evt_AAAAAAAAAAAAAAAAAAAAAA',
  tenantPublicId: 'ten_BBBBBBBBBBBBBBBBBBBBBB',
  workspaceId: '7f1c1d7e-3a53-4e58-9d1a-6e2c1b6d9a10',
  queueId: 'que_CCCCCCCCCCCCCCCCCCCCCC',
  queueName: 'orders',
  receivedAt: Date.parse('2031-05-06T07:08:09.123Z'),
  contentType: 'application/json; charset=utf-8',
  idempotencyKey: 'idem-1',
  eventType: 'order.created',
  groupKey: 'acme',
  partitionKey: 'order-42',
  path: 'sg:ten_x/a,sg:ten_y/b',
  body: Buffer.from('{"id":42,"name":"café"}'),
  ...over,
});

t.test('round-trip keeps every field', async (t) => {
  const original = record();
  const decoded = decodeEvent(encodeEvent(original));
  const { body, ...rest } = decoded;
  const { body: originalBody, ...originalRest } = original;
  t.strictSame(rest, originalRest);
  t.ok(Buffer.isBuffer(body), 'body comes back as a Buffer');
  t.ok(body.equals(originalBody), 'exact body bytes');
});

t.test('null optional fields stay null', async (t) => {
  const original = record({ contentType: null, idempotencyKey: null, eventType: null, groupKey: null, partitionKey: null, path: null });
  const decoded = decodeEvent(encodeEvent(original));
  for (const k of ['contentType', 'idempotencyKey', 'eventType', 'groupKey', 'partitionKey', 'path'] as const) {
    t.equal(decoded[k], null, k);
  }
});

t.test('body bytes survive exactly, including non-UTF-8', async (t) => {
  const bodies: Record<string, Buffer> = {
    empty: Buffer.alloc(0),
    'invalid UTF-8': Buffer.from([0xff, 0xfe, 0x00, 0xc3, 0x28, 0xa0, 0xa1, 0xed, 0xa0, 0x80]),
    'all byte values': Buffer.from(Array.from({ length: 256 }, (_, i) => i)),
    'BOM and CRLF': Buffer.from('\ufeff{"a":1}\r\n', 'utf8'),
    '1 MiB random': randomBytes(1024 * 1024),
  };
  for (const [name, body] of Object.entries(bodies)) {
    const decoded = decodeEvent(encodeEvent(record({ body })));
    t.equal(decoded.body.length, body.length, `${name}: length`);
    t.ok(decoded.body.equals(body), `${name}: bytes`);
  }
});

t.test('a body that is a slice of a larger buffer encodes only its own bytes', async (t) => {
  const big = Buffer.from('XXXXhelloYYYY');
  const decoded = decodeEvent(encodeEvent(record({ body: big.subarray(4, 9) })));
  t.equal(decoded.body.toString(), 'hello');
});

t.test('large and unusual values survive', async (t) => {
  const original = record({ receivedAt: 4_102_444_800_000, groupKey: '東京🚀', partitionKey: '' });
  const decoded = decodeEvent(encodeEvent(original));
  t.equal(decoded.receivedAt, 4_102_444_800_000);
  t.equal(decoded.groupKey, '東京🚀');
  t.equal(decoded.partitionKey, '');
});

t.test('decode rejects garbage and other versions', async (t) => {
  const plain = new Packr({ useRecords: false });
  t.throws(() => decodeEvent(Buffer.alloc(0)), 'empty');
  t.throws(() => decodeEvent(Buffer.from('garbage')), 'text');
  t.throws(() => decodeEvent(Buffer.from([0xc1])), 'reserved msgpack byte');
  t.throws(() => decodeEvent(plain.pack('a string')), 'not a map');
  t.throws(() => decodeEvent(plain.pack(null)), 'nil');
  t.throws(() => decodeEvent(plain.pack({ ...record(), v: 2 })), 'version 2');
  t.throws(() => decodeEvent(plain.pack({ ...record(), v: undefined })), 'no version');
  t.throws(() => decodeEvent(plain.pack({ ...record(), id: 42 })), 'id not a string');
});

t.test('records encoded by another encoder instance decode (no shared structures)', async (t) => {
  const other = new Packr({ useRecords: false, moreTypes: false });
  const decoded = decodeEvent(other.pack(record()));
  t.equal(decoded.id, record().id);
  t.ok(decoded.body.equals(record().body));
});
