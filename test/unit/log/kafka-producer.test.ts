import t, { type Test } from 'tap';
import { createRequire } from 'node:module';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { loadConfig } from '../../../src/config/load-config.js';
import type { Config } from '../../../src/config/schema.js';
import { KafkaProducer, type PendingRecord } from '../../../src/log/kafka-producer.js';
import { createLogger } from '../../../src/observability/logger.js';
import { javaPartition } from '../../helpers/java-partition.js';

/**
 * KafkaProducer's error handling against a scripted broker: a TCP server that
 * answers ApiVersions, Metadata v4 and Produce v3 (built with kafkajs's
 * encoder), with the partition error codes the test chooses per attempt.
 */
const require = createRequire(import.meta.url);
interface Enc {
  writeInt8(v: number): Enc;
  writeInt16(v: number): Enc;
  writeInt32(v: number): Enc;
  writeInt64(v: number): Enc;
  writeBoolean(v: boolean): Enc;
  writeString(v: string | null): Enc;
  writeArray(v: unknown[], type?: string): Enc;
  buffer: Buffer;
}
interface Dec {
  readInt16(): number;
  readInt32(): number;
  readString(): string | null;
  readBytes(n: number): Buffer;
}
const Encoder = require('kafkajs/src/protocol/encoder') as new () => Enc;
const Decoder = require('kafkajs/src/protocol/decoder') as new (b: Buffer) => Dec;

const TOPIC = 'scripted';
const PARTITIONS = 3;

interface Script {
  /** Error code for a produce to `partition`, on the `n`-th produce to it (1-based). */
  produceError: (partition: number, n: number) => number;
  /** Leader per partition in metadata (-1 = none); all on the one broker by default. */
  leaderOf?: (partition: number, metadataRequest: number) => number;
}

interface Scripted {
  port: number;
  produces: Map<number, number>;
  metadataRequests: () => number;
}

async function scriptedBroker(t: Test, script: Script): Promise<Scripted> {
  const produces = new Map<number, number>();
  let metadataRequests = 0;
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    let pending = Buffer.alloc(0);
    socket.on('data', (chunk) => {
      pending = Buffer.concat([pending, chunk]);
      while (pending.length >= 4 && pending.length >= 4 + pending.readInt32BE(0)) {
        const frame = pending.subarray(4, 4 + pending.readInt32BE(0));
        pending = pending.subarray(4 + frame.length);
        socket.write(answer(frame));
      }
    });
    socket.on('error', () => {});
  });
  const answer = (frame: Buffer): Buffer => {
    const d = new Decoder(frame);
    const apiKey = d.readInt16();
    d.readInt16();
    const correlationId = d.readInt32();
    d.readString();
    let body: Buffer;
    if (apiKey === 18) {
      const range = (k: number, min: number, max: number) => new Encoder().writeInt16(k).writeInt16(min).writeInt16(max);
      body = new Encoder().writeInt16(0).writeArray([range(0, 3, 11), range(3, 0, 12), range(18, 0, 3)]).buffer;
    } else if (apiKey === 3) {
      metadataRequests++;
      const n = metadataRequests;
      const partition = (p: number) => {
        const leader = script.leaderOf?.(p, n) ?? 1;
        return new Encoder().writeInt16(leader < 0 ? 5 : 0).writeInt32(p).writeInt32(leader).writeArray([1], 'int32').writeArray(leader < 0 ? [] : [1], 'int32');
      };
      body = new Encoder()
        .writeInt32(0)
        .writeArray([new Encoder().writeInt32(1).writeString('127.0.0.1').writeInt32(port).writeString(null)])
        .writeString('scripted-cluster')
        .writeInt32(1)
        .writeArray([new Encoder().writeInt16(0).writeString(TOPIC).writeBoolean(false).writeArray(Array.from({ length: PARTITIONS }, (_, p) => partition(p)))]).buffer;
    } else if (apiKey === 0) {
      d.readString();
      d.readInt16();
      d.readInt32();
      const results: Enc[] = [];
      const topics = d.readInt32();
      for (let i = 0; i < topics; i++) {
        d.readString();
        const parts = d.readInt32();
        for (let j = 0; j < parts; j++) {
          const p = d.readInt32();
          d.readBytes(d.readInt32());
          const n = (produces.get(p) ?? 0) + 1;
          produces.set(p, n);
          const code = script.produceError(p, n);
          results.push(new Encoder().writeInt32(p).writeInt16(code).writeInt64(code === 0 ? n : -1).writeInt64(-1));
        }
      }
      body = new Encoder().writeArray([new Encoder().writeString(TOPIC).writeArray(results)]).writeInt32(0).buffer;
    } else {
      throw new Error(`unexpected api key ${apiKey}`);
    }
    const out = Buffer.alloc(8 + body.length);
    out.writeInt32BE(4 + body.length, 0);
    out.writeInt32BE(correlationId, 4);
    body.copy(out, 8);
    return out;
  };
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  t.teardown(() => new Promise<void>((resolve) => {
    for (const s of sockets) s.destroy();
    server.close(() => resolve());
  }));
  return { port, produces, metadataRequests: () => metadataRequests };
}

function settings(port: number, producer: Partial<Config['kafka']['producer']> = {}): Readonly<Config['kafka']> {
  return loadConfig({}, { kafka: { brokers: [`127.0.0.1:${port}`], topic: TOPIC, producer: { retryMs: 2000, ...producer } } }).kafka;
}

/** Sends records with these keys; resolves with each record's outcome (null = acknowledged). */
async function send(producer: KafkaProducer, keys: Array<string | null>): Promise<Array<Error | null>> {
  const outcomes: Array<Promise<Error | null>> = [];
  const records: PendingRecord[] = [];
  for (const key of keys) {
    outcomes.push(new Promise((resolve) => records.push({ key, value: Buffer.from('v'), resolve: () => resolve(null), reject: resolve })));
  }
  await producer.send(records);
  return Promise.all(outcomes);
}

/** A key that Java's placement (written out independently of src/) puts on `partition`. */
function keyFor(partition: number): string {
  for (let i = 0; ; i++) {
    const key = `key-${i}`;
    if (javaPartition(key, PARTITIONS) === partition) return key;
  }
}

t.test('a retriable partition error refreshes metadata and retries only that partition', async (t) => {
  // partition 1 answers NOT_LEADER_OR_FOLLOWER twice, then takes the records
  const broker = await scriptedBroker(t, { produceError: (p, n) => (p === 1 && n <= 2 ? 6 : 0) });
  const producer = new KafkaProducer(settings(broker.port), createLogger('silent'));
  await producer.connect();
  const before = broker.metadataRequests();
  const outcomes = await send(producer, [keyFor(0), keyFor(1), keyFor(2), keyFor(1)]);
  await producer.close();
  t.same(outcomes, [null, null, null, null], 'every record acknowledged');
  t.same([broker.produces.get(0), broker.produces.get(1), broker.produces.get(2)], [1, 3, 1], 'only partition 1 sent again');
  t.ok(broker.metadataRequests() - before >= 2, 'metadata refreshed before each retry');
});

t.test('a non-retriable partition error rejects that partition at once, naming the Kafka error; the others succeed', async (t) => {
  const broker = await scriptedBroker(t, { produceError: (p) => (p === 2 ? 2 : 0) });
  const producer = new KafkaProducer(settings(broker.port), createLogger('silent'));
  await producer.connect();
  const started = Date.now();
  const outcomes = await send(producer, [keyFor(0), keyFor(2), keyFor(1)]);
  await producer.close();
  t.equal(outcomes[0], null);
  t.equal(outcomes[2], null);
  t.match(outcomes[1]?.message, /CORRUPT_MESSAGE \(2\)/);
  t.equal(broker.produces.get(2), 1, 'not retried');
  t.ok(Date.now() - started < 1000, 'at once, not after the retry deadline');
});

t.test('a partition without a leader waits for one (records without a key go to partitions that have one)', async (t) => {
  // partition 0 has no leader in the first two metadata answers
  const broker = await scriptedBroker(t, { produceError: () => 0, leaderOf: (p, n) => (p === 0 && n <= 2 ? -1 : 1) });
  const producer = new KafkaProducer(settings(broker.port), createLogger('silent'));
  await producer.connect();
  const outcomes = await send(producer, [keyFor(0), null, null, null, null]);
  t.same(outcomes, [null, null, null, null, null]);
  t.equal(broker.produces.get(0), 1, 'partition 0 written once, after it had a leader');
  await producer.close();
});

t.test('retriable errors until the deadline: the records reject naming the last Kafka error', async (t) => {
  const broker = await scriptedBroker(t, { produceError: () => 19 });
  const producer = new KafkaProducer(settings(broker.port, { retryMs: 600 }), createLogger('silent'));
  await producer.connect();
  const started = Date.now();
  const [outcome] = await send(producer, [keyFor(0)]);
  await producer.close();
  t.match(outcome?.message, /within kafka\.producer\.retryMs \(600 ms\): Kafka error NOT_ENOUGH_REPLICAS \(19\)/);
  t.ok(Date.now() - started >= 550, `gave up at the deadline (${Date.now() - started} ms)`);
  t.ok(broker.produces.get(0)! >= 3, `retried ${broker.produces.get(0)} times`);
});

t.test('a closed producer rejects new records at once', async (t) => {
  const broker = await scriptedBroker(t, { produceError: () => 0 });
  const producer = new KafkaProducer(settings(broker.port), createLogger('silent'));
  await producer.connect();
  await producer.close();
  const [outcome] = await send(producer, ['k']);
  t.match(outcome?.message, /closed/);
});

t.test('a broker that does not serve Produce v3 fails connect with a clear message', async (t) => {
  const server = createServer((socket) => {
    socket.on('data', (chunk) => {
      const correlationId = chunk.readInt32BE(8);
      const range = (k: number, min: number, max: number) => new Encoder().writeInt16(k).writeInt16(min).writeInt16(max);
      const body = new Encoder().writeInt16(0).writeArray([range(0, 9, 12), range(3, 0, 12)]).buffer;
      const out = Buffer.alloc(8 + body.length);
      out.writeInt32BE(4 + body.length, 0);
      out.writeInt32BE(correlationId, 4);
      body.copy(out, 8);
      socket.write(out);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const producer = new KafkaProducer(settings((server.address() as AddressInfo).port), createLogger('silent'));
  await t.rejects(producer.connect(), { message: /does not serve Produce v3 \(it serves v9–v12\)/ });
  await producer.close();
});
