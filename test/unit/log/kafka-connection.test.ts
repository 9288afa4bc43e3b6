import t, { type Test } from 'tap';
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { KafkaConnection } from '../../../src/log/kafka-connection.js';
import { isRetriable } from '../../../src/log/kafka-errors.js';

/**
 * KafkaConnection against a fake broker: a TCP server whose answers the test
 * shapes (split, merged, out of order, never, or a closed socket).
 */

/** A framed request as the connection would send one: size, then correlation id and a marker byte. */
const request = (marker: number) => (correlationId: number) => {
  const buf = Buffer.alloc(9);
  buf.writeInt32BE(5, 0);
  buf.writeInt32BE(correlationId, 4);
  buf[8] = marker;
  return buf;
};

/** The response frame for correlation id `id` with body `body`. */
function frame(id: number, body: Buffer): Buffer {
  const out = Buffer.alloc(8 + body.length);
  out.writeInt32BE(4 + body.length, 0);
  out.writeInt32BE(id, 4);
  body.copy(out, 8);
  return out;
}

interface FakeBroker {
  port: number;
  /** Resolves with each request's [correlationId, marker] as they arrive. */
  requests: Array<[number, number]>;
  socket: () => Socket;
  waitForRequests: (n: number) => Promise<void>;
}

async function fakeBroker(t: Test): Promise<FakeBroker> {
  const requests: Array<[number, number]> = [];
  let client: Socket | null = null;
  let pending = Buffer.alloc(0);
  const server: Server = createServer((socket) => {
    client = socket;
    socket.on('data', (chunk) => {
      pending = Buffer.concat([pending, chunk]);
      while (pending.length >= 4 && pending.length >= 4 + pending.readInt32BE(0)) {
        requests.push([pending.readInt32BE(4), pending[8]!]);
        pending = pending.subarray(4 + pending.readInt32BE(0));
      }
    });
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => {
    client?.destroy();
    server.close(() => resolve());
  }));
  return {
    port: (server.address() as AddressInfo).port,
    requests,
    socket: () => client!,
    waitForRequests: async (n) => {
      while (requests.length < n) await new Promise((r) => setTimeout(r, 2));
    },
  };
}

const open = (port: number, requestTimeoutMs = 5000) =>
  KafkaConnection.open({ host: '127.0.0.1', port, connectTimeoutMs: 1000, requestTimeoutMs });

t.test('pipelined requests get their own answers, however the bytes are cut', async (t) => {
  const broker = await fakeBroker(t);
  const conn = await open(broker.port);
  const answers = [1, 2, 3].map((m) => conn.request(request(m)));
  await broker.waitForRequests(3);
  const ids = broker.requests.map(([id]) => id);
  t.same(broker.requests.map(([, m]) => m), [1, 2, 3], 'written in order');
  const bytes = Buffer.concat(ids.map((id, i) => frame(id, Buffer.from(`answer-${i + 1}`))));
  // first frame cut inside its size prefix, the rest merged into one write
  broker.socket().write(bytes.subarray(0, 2));
  await new Promise((r) => setTimeout(r, 10));
  broker.socket().write(bytes.subarray(2, 13));
  await new Promise((r) => setTimeout(r, 10));
  broker.socket().write(bytes.subarray(13));
  t.same((await Promise.all(answers)).map((b) => b.toString()), ['answer-1', 'answer-2', 'answer-3']);
  t.equal(conn.inFlight, 0);
  await conn.close();
});

t.test('an answer for the wrong correlation id fails the connection, retriably', async (t) => {
  const broker = await fakeBroker(t);
  const conn = await open(broker.port);
  const a = conn.request(request(1));
  const b = conn.request(request(2));
  await broker.waitForRequests(2);
  broker.socket().write(frame(broker.requests[1]![0], Buffer.from('x')));
  for (const p of [a, b]) {
    const err = await p.then(() => null, (e: Error) => e);
    t.ok(err && isRetriable(err), `rejected retriably: ${err?.message}`);
  }
  t.notOk(conn.usable);
  await t.rejects(conn.request(request(3)), { name: 'KafkaConnectionError' }, 'no further requests');
});

t.test('the broker closing the socket rejects every pending request retriably', async (t) => {
  const broker = await fakeBroker(t);
  const conn = await open(broker.port);
  let closedWith: Error | null = null;
  conn.onClose((err) => (closedWith = err));
  const pending = [conn.request(request(1)), conn.request(request(2))];
  await broker.waitForRequests(2);
  broker.socket().destroy();
  for (const p of pending) await t.rejects(p, { name: 'KafkaConnectionError' });
  t.ok(closedWith, 'onClose listeners told');
});

t.test('a request unanswered past its timeout takes the connection down', async (t) => {
  const broker = await fakeBroker(t);
  const conn = await open(broker.port, 100);
  const started = Date.now();
  await t.rejects(conn.request(request(1)), { name: 'KafkaConnectionError', message: /no response within 100 ms/ });
  t.ok(Date.now() - started < 1000, 'soon after the timeout');
  t.notOk(conn.usable);
});

t.test('close() waits for the answers still due, then ends the socket', async (t) => {
  const broker = await fakeBroker(t);
  const conn = await open(broker.port);
  const answer = conn.request(request(1));
  await broker.waitForRequests(1);
  const closing = conn.close();
  await t.rejects(conn.request(request(2)), { name: 'KafkaConnectionError' }, 'no new requests while closing');
  setTimeout(() => broker.socket().write(frame(broker.requests[0]![0], Buffer.from('late'))), 30);
  t.equal((await answer).toString(), 'late');
  await closing;
});

t.test('a refused connection is a retriable KafkaConnectionError', async (t) => {
  const err = await KafkaConnection.open({ host: '127.0.0.1', port: 1, connectTimeoutMs: 500, requestTimeoutMs: 500 }).then(() => null, (e: Error) => e);
  t.ok(err && isRetriable(err), String(err));
  t.match(err?.message, /cannot connect to Kafka at 127\.0\.0\.1:1/);
});
