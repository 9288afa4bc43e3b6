import t from 'tap';
import { createRequire } from 'node:module';
import { randomBytes } from 'node:crypto';
import { crc32c } from '../../../src/log/crc32c.js';
import { decodeApiVersionsResponse, encodeApiVersionsRequest } from '../../../src/log/kafka-api-versions.js';
import { FrameSplitter } from '../../../src/log/kafka-frame.js';
import { decodeMetadataResponse, encodeMetadataRequest } from '../../../src/log/kafka-metadata.js';
import {
  decodeProduceResponse,
  encodeProduceRequest,
  RECORD_BATCH_OVERHEAD,
  recordSize,
  type PartitionBatch,
  type RecordSource,
} from '../../../src/log/kafka-produce-request.js';
import { varintSize, writeVarint } from '../../../src/log/kafka-wire.js';

/*
 * Independent checks: what we encode is read back with kafkajs's decoders, and
 * what we decode is built with kafkajs's encoder, so a mistake has to be made
 * twice, in two code bases, to pass.
 */
const require = createRequire(import.meta.url);

interface KafkajsDecoder {
  readInt8(): number;
  readInt16(): number;
  readInt32(): number;
  readString(): string | null;
  readBytes(length: number): Buffer;
  readVarInt(): number;
  canReadBytes(length: number): boolean;
  offset: number;
}
interface KafkajsEncoder {
  writeInt8(v: number): KafkajsEncoder;
  writeInt16(v: number): KafkajsEncoder;
  writeInt32(v: number): KafkajsEncoder;
  writeInt64(v: number | string): KafkajsEncoder;
  writeBoolean(v: boolean): KafkajsEncoder;
  writeString(v: string | null): KafkajsEncoder;
  writeArray(v: unknown[], type?: string): KafkajsEncoder;
  writeEncoder(v: KafkajsEncoder): KafkajsEncoder;
  writeVarInt(v: number): KafkajsEncoder;
  buffer: Buffer;
}
interface DecodedRecord {
  key: Buffer | null;
  value: Buffer | null;
  offset: string;
  timestamp: string;
  headers: Record<string, unknown>;
}
interface DecodedBatch {
  firstOffset: string;
  lastOffsetDelta: number;
  partitionLeaderEpoch: number;
  producerId: string;
  producerEpoch: number;
  firstSequence: number;
  firstTimestamp: string;
  maxTimestamp: string;
  records: DecodedRecord[];
}
const Decoder = require('kafkajs/src/protocol/decoder') as new (buf: Buffer) => KafkajsDecoder;
const Encoder = require('kafkajs/src/protocol/encoder') as { new (): KafkajsEncoder; sizeOfVarInt(v: number): number };
const decodeRecordBatch = require('kafkajs/src/protocol/recordBatch/v0/decoder') as (d: KafkajsDecoder) => Promise<DecodedBatch>;
const kafkajsRequest = require('kafkajs/src/protocol/request') as (args: {
  correlationId: number;
  clientId: string;
  request: unknown;
}) => Promise<{ buffer: Buffer }>;
const MetadataV4Request = require('kafkajs/src/protocol/requests/metadata/v4/request') as (args: { topics: string[]; allowAutoTopicCreation: boolean }) => unknown;
const decodeMetadataV4 = (require('kafkajs/src/protocol/requests/metadata/v4/response') as { decode: (b: Buffer) => Promise<unknown> }).decode;

const clientId = Buffer.from('sg-test');

/** Reads our Produce v3 request with kafkajs's decoders: header, then each partition's RecordBatch. */
async function readProduceRequest(buf: Buffer) {
  const d = new Decoder(buf);
  const size = d.readInt32();
  const header = { apiKey: d.readInt16(), apiVersion: d.readInt16(), correlationId: d.readInt32(), clientId: d.readString() };
  const transactionalId = d.readString();
  const acks = d.readInt16();
  const timeoutMs = d.readInt32();
  const topics: Array<{ name: string | null; partitions: Array<{ partition: number; batch: DecodedBatch; raw: Buffer }> }> = [];
  const topicCount = d.readInt32();
  for (let ti = 0; ti < topicCount; ti++) {
    const name = d.readString();
    const partitions = [];
    const partitionCount = d.readInt32();
    for (let pi = 0; pi < partitionCount; pi++) {
      const partition = d.readInt32();
      const raw = d.readBytes(d.readInt32());
      partitions.push({ partition, raw, batch: await decodeRecordBatch(new Decoder(raw)) });
    }
    topics.push({ name, partitions });
  }
  return { size, header, transactionalId, acks, timeoutMs, topics, rest: buf.length - d.offset };
}

/** The stored CRC of a raw RecordBatch, and the CRC-32C (kafkajs's) of the bytes it covers. */
function crcOf(raw: Buffer): { stored: number; computed: number } {
  const kafkajsCrc32c = require('kafkajs/src/protocol/recordBatch/crc32C') as (buf: Buffer) => number;
  return { stored: raw.readUInt32BE(17), computed: kafkajsCrc32c(raw.subarray(21)) };
}

const keyBytesOf = (records: readonly RecordSource[]) => records.map((r) => (r.key === null ? -1 : Buffer.byteLength(r.key)));

t.test('Produce v3: kafkajs reads back every key, value and count; the CRC is valid', async (t) => {
  const records: RecordSource[] = [
    { key: 'alpha', value: Buffer.from('{"n":1}') },
    { key: null, value: Buffer.from('no key') },
    { key: '', value: Buffer.from('empty key') },
    { key: 'ключ-€-𝄞', value: Buffer.alloc(0) },
    { key: 'big', value: randomBytes(20_000) },
    ...Array.from({ length: 150 }, (_, i) => ({ key: `k${i % 7}`, value: randomBytes(100 + i) })),
  ];
  const batches: PartitionBatch[] = [
    { partition: 0, indices: records.map((_, i) => i).filter((i) => i % 3 === 0) },
    { partition: 7, indices: records.map((_, i) => i).filter((i) => i % 3 !== 0) },
  ];
  const timestamp = Date.parse('2031-05-06T07:08:09.123Z');
  const buf = encodeProduceRequest({
    correlationId: 4242, clientId, topic: Buffer.from('sg.events'), acks: -1, timeoutMs: 30_000, timestamp,
    records, keyBytes: keyBytesOf(records), batches,
  });
  const req = await readProduceRequest(buf);
  t.equal(req.size, buf.length - 4, 'size prefix');
  t.same(req.header, { apiKey: 0, apiVersion: 3, correlationId: 4242, clientId: 'sg-test' });
  t.equal(req.transactionalId, null);
  t.equal(req.acks, -1);
  t.equal(req.timeoutMs, 30_000);
  t.equal(req.rest, 0, 'nothing after the last partition');
  t.equal(req.topics.length, 1);
  t.equal(req.topics[0]!.name, 'sg.events');
  const parts = req.topics[0]!.partitions;
  t.same(parts.map((p) => p.partition), [0, 7]);
  for (const [n, p] of parts.entries()) {
    const expected = batches[n]!.indices.map((i) => records[i]!);
    const { batch } = p;
    t.equal(batch.records.length, expected.length, `partition ${p.partition}: record count`);
    t.equal(batch.lastOffsetDelta, expected.length - 1);
    t.equal(batch.firstOffset, '0');
    t.equal(batch.firstTimestamp, String(timestamp));
    t.equal(batch.maxTimestamp, String(timestamp));
    t.same([batch.partitionLeaderEpoch, batch.producerId, batch.producerEpoch, batch.firstSequence], [-1, '-1', -1, -1], 'no producer id, epoch or sequence');
    t.ok(batch.records.every((r, i) => r.offset === String(i)), 'offsets 0..n-1');
    t.ok(batch.records.every((r) => r.timestamp === String(timestamp)), 'timestamps');
    t.ok(batch.records.every((r) => Object.keys(r.headers).length === 0), 'no headers');
    t.same(batch.records.map((r) => (r.key === null ? null : r.key.toString())), expected.map((r) => r.key), 'keys');
    t.ok(batch.records.every((r, i) => r.value!.equals(expected[i]!.value)), 'values byte for byte');
    const crc = crcOf(p.raw);
    t.equal(crc.stored, crc.computed, `partition ${p.partition}: CRC-32C valid`);
    t.equal(crc.stored, crc32c(p.raw, 21), 'and equal to ours');
  }
});

t.test('recordSize is what the encoder writes, across varint width boundaries', async (t) => {
  for (const valueBytes of [0, 1, 50, 52, 53, 127, 128, 8100, 8191, 8192, 1 << 14, 1 << 21]) {
    const records = [{ key: 'key', value: Buffer.alloc(valueBytes, 1) }];
    const buf = encodeProduceRequest({
      correlationId: 1, clientId, topic: Buffer.from('t'), acks: -1, timeoutMs: 1000, timestamp: 1, records, keyBytes: [3],
      batches: [{ partition: 0, indices: [0] }],
    });
    const header = 4 + 2 + 2 + 4 + 2 + clientId.length + 2 + 2 + 4 + 4 + 2 + 1 + 4 + 8;
    t.equal(buf.length - header - RECORD_BATCH_OVERHEAD, recordSize(3, valueBytes, 0), `value of ${valueBytes} bytes`);
  }
});

t.test('a wrong key byte count is refused rather than sent misaligned', async (t) => {
  t.throws(() =>
    encodeProduceRequest({
      correlationId: 1, clientId, topic: Buffer.from('t'), acks: -1, timeoutMs: 1000, timestamp: 1,
      records: [{ key: 'é', value: Buffer.from('v') }], keyBytes: [1], batches: [{ partition: 0, indices: [0] }],
    }),
  );
});

t.test('zigzag varints match kafkajs', async (t) => {
  const values = [0, 1, -1, 63, -64, 64, -65, 8191, 8192, -8193, 1 << 20, (1 << 27) - 1, 1 << 27, 0x7fffffff, -0x80000000];
  for (const v of values) {
    const theirs = new Encoder().writeVarInt(v).buffer;
    const ours = Buffer.alloc(5);
    const end = writeVarint(ours, 0, v);
    t.same(ours.subarray(0, end), theirs, `bytes of ${v}`);
    t.equal(varintSize(v), Encoder.sizeOfVarInt(v), `size of ${v}`);
  }
});

t.test('Metadata v4 request: byte for byte what kafkajs sends (auto-creation off)', async (t) => {
  const ours = encodeMetadataRequest(77, clientId, ['sg.events', 'other']);
  const theirs = await kafkajsRequest({ correlationId: 77, clientId: 'sg-test', request: MetadataV4Request({ topics: ['sg.events', 'other'], allowAutoTopicCreation: false }) });
  t.same(ours, theirs.buffer);
});

function metadataResponseBody(): Buffer {
  const broker = (id: number, host: string, port: number, rack: string | null) =>
    new Encoder().writeInt32(id).writeString(host).writeInt32(port).writeString(rack);
  const partition = (err: number, index: number, leader: number, replicas: number[], isr: number[]) =>
    new Encoder().writeInt16(err).writeInt32(index).writeInt32(leader).writeArray(replicas, 'int32').writeArray(isr, 'int32');
  const topic = (err: number, name: string, internal: boolean, partitions: KafkajsEncoder[]) =>
    new Encoder().writeInt16(err).writeString(name).writeBoolean(internal).writeArray(partitions);
  return new Encoder()
    .writeInt32(5)
    .writeArray([broker(1, 'kafka-1.local', 9092, null), broker(2, 'kafka-2.local', 9093, 'eu-west-1a')])
    .writeString('cluster-xyz')
    .writeInt32(2)
    .writeArray([
      topic(0, 'sg.events', false, [partition(0, 0, 1, [1, 2], [1, 2]), partition(5, 1, -1, [2], [])]),
      topic(3, 'missing', false, []),
    ]).buffer;
}

t.test('Metadata v4 response decodes from a buffer built with kafkajs’s encoder', async (t) => {
  const body = metadataResponseBody();
  const meta = decodeMetadataResponse(body);
  t.same(meta, {
    throttleTimeMs: 5,
    brokers: [
      { nodeId: 1, host: 'kafka-1.local', port: 9092, rack: null },
      { nodeId: 2, host: 'kafka-2.local', port: 9093, rack: 'eu-west-1a' },
    ],
    clusterId: 'cluster-xyz',
    controllerId: 2,
    topics: [
      {
        errorCode: 0, name: 'sg.events', isInternal: false,
        partitions: [
          { errorCode: 0, partition: 0, leader: 1, replicas: [1, 2], isr: [1, 2] },
          { errorCode: 5, partition: 1, leader: -1, replicas: [2], isr: [] },
        ],
      },
      { errorCode: 3, name: 'missing', isInternal: false, partitions: [] },
    ],
  });
  // kafkajs reads the same buffer the same way.
  const theirs = (await decodeMetadataV4(body)) as { brokers: Array<{ host: string }>; topicMetadata: Array<{ partitionMetadata: Array<{ leader: number }> }> };
  t.same(theirs.brokers.map((b) => b.host), meta.brokers.map((b) => b.host));
  t.same(theirs.topicMetadata[0]!.partitionMetadata.map((p) => p.leader), [1, -1]);
});

t.test('a truncated response is an error, not garbage', async (t) => {
  const body = metadataResponseBody();
  for (const cut of [0, 3, 10, body.length - 1]) {
    t.throws(() => decodeMetadataResponse(body.subarray(0, cut)), { name: 'TruncatedResponseError' }, `cut at ${cut}`);
  }
});

t.test('Produce v3 response decodes from a buffer built with kafkajs’s encoder', async (t) => {
  const partition = (index: number, err: number, offset: string) =>
    new Encoder().writeInt32(index).writeInt16(err).writeInt64(offset).writeInt64(-1);
  const body = new Encoder()
    .writeArray([new Encoder().writeString('sg.events').writeArray([partition(0, 0, '9007199254740993'), partition(3, 6, '-1')])])
    .writeInt32(12).buffer;
  t.same(decodeProduceResponse(body), {
    topics: [{
      name: 'sg.events',
      partitions: [
        { partition: 0, errorCode: 0, baseOffset: 9007199254740993n, logAppendTimeMs: -1n },
        { partition: 3, errorCode: 6, baseOffset: -1n, logAppendTimeMs: -1n },
      ],
    }],
    throttleTimeMs: 12,
  });
});

t.test('ApiVersions v0 request and response', async (t) => {
  const req = encodeApiVersionsRequest(9, clientId);
  const d = new Decoder(req);
  t.same([d.readInt32(), d.readInt16(), d.readInt16(), d.readInt32(), d.readString()], [req.length - 4, 18, 0, 9, 'sg-test']);
  const range = (key: number, min: number, max: number) => new Encoder().writeInt16(key).writeInt16(min).writeInt16(max);
  const body = new Encoder().writeInt16(0).writeArray([range(0, 3, 12), range(3, 4, 13)]).buffer;
  t.same(decodeApiVersionsResponse(body), { errorCode: 0, apis: [{ apiKey: 0, minVersion: 3, maxVersion: 12 }, { apiKey: 3, minVersion: 4, maxVersion: 13 }] });
});

/** Three response frames (int32 size, then correlation id and body) back to back. */
function frames(): { stream: Buffer; bodies: Buffer[] } {
  const bodies = [randomBytes(1), randomBytes(300), Buffer.alloc(0)].map((body, i) => Buffer.concat([Buffer.from([0, 0, 0, i + 1]), body]));
  const stream = Buffer.concat(
    bodies.map((b) => {
      const size = Buffer.alloc(4);
      size.writeInt32BE(b.length);
      return Buffer.concat([size, b]);
    }),
  );
  return { stream, bodies };
}

/** The frames the splitter hands on for these chunks (copied), or null when it ends mid-frame. */
function collect(chunks: Buffer[]): Buffer[] | null {
  const out: Buffer[] = [];
  const splitter = new FrameSplitter((f) => out.push(Buffer.from(f)));
  for (const c of chunks) splitter.push(c);
  return splitter.midFrame ? null : out;
}

t.test('frame reassembly: several frames in one chunk', async (t) => {
  const { stream, bodies } = frames();
  t.same(collect([stream]), bodies);
});

t.test('frame reassembly: the stream split at every byte boundary, and at every pair', async (t) => {
  const { stream, bodies } = frames();
  let wrong = 0;
  for (let i = 0; i <= stream.length; i++) {
    const got = collect([stream.subarray(0, i), stream.subarray(i)]);
    if (JSON.stringify(got) !== JSON.stringify(bodies)) wrong++;
    for (let j = i; j <= stream.length; j += 7) {
      const three = collect([stream.subarray(0, i), stream.subarray(i, j), stream.subarray(j)]);
      if (JSON.stringify(three) !== JSON.stringify(bodies)) wrong++;
    }
  }
  t.equal(wrong, 0, 'every split yields the same frames');
  t.same(collect([...stream].map((b) => Buffer.from([b]))), bodies, 'one byte per chunk');
});

t.test('frame reassembly: a whole frame is handed on without a copy', async (t) => {
  const { stream } = frames();
  const seen: Buffer[] = [];
  new FrameSplitter((f) => seen.push(f)).push(stream);
  t.equal(seen[1]!.buffer, stream.buffer, 'a view of the chunk');
});

t.test('frame reassembly: an impossible size throws', async (t) => {
  const splitter = new FrameSplitter(() => {}, 1024);
  t.throws(() => splitter.push(Buffer.from([0, 0, 0, 2, 0, 0])), RangeError, 'shorter than a correlation id');
  t.throws(() => new FrameSplitter(() => {}, 1024).push(Buffer.from([0, 1, 0, 0])), RangeError, 'over the limit');
  t.throws(() => new FrameSplitter(() => {}).push(Buffer.from([0xff, 0xff, 0xff, 0xff])), RangeError, 'negative');
});
