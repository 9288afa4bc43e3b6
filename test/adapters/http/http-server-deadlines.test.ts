import t, { type Test } from 'tap';
import net from 'node:net';
import { listenPublic, type ListenSettings } from '../../../src/http/listen.js';
import { Router } from '../../../src/http/router.js';
import { HttpServer } from '../../../src/http/server.js';
import { createLogger } from '../../../src/observability/logger.js';
import { converse, header, parseResponses, transcript, type HttpResponse } from '../../helpers/http-conversation.js';

/**
 * Slow clients against the server's deadlines (config server.headTimeoutMs,
 * bodyTimeoutMs, idleTimeoutMs; src/http/connection.ts), on raw sockets as an
 * attacker would hold them: a head or body that stops arriving is answered
 * 408 request_timeout and closed, an idle connection is closed (FIN, no 408:
 * nothing was started), a client that reads none of its answers is cut off;
 * and a slow client that finishes in time is served.
 *
 * The deadlines are checked by a sweep once a second, so a deadline is met
 * between its length and its length + 1 s (+ event-loop lag): the bounds below
 * leave 2.5 s above and 100 ms below, enough for a loaded 2-core box.
 */

const HEAD_MS = 1_000;
const BODY_MS = 1_500;
const IDLE_MS = 1_000;
/** Above a deadline: one sweep period and room for a busy event loop. */
const LATE_MS = 2_500;
/** Below a deadline: timer and clock granularity only. */
const EARLY_MS = 100;

const SETTINGS: ListenSettings = {
  host: '127.0.0.1',
  port: 0,
  maxBodyBytes: 4096,
  maxManagementBodyBytes: 4096,
  proxyProtocolFrom: [],
  headTimeoutMs: HEAD_MS,
  bodyTimeoutMs: BODY_MS,
  idleTimeoutMs: IDLE_MS,
};

const BIG = Buffer.alloc(64 * 1024, 'x');
let bigAnswers = 0;

function testRouter(): Router {
  const router = new Router(createLogger('silent'));
  const opts = { maxBodyBytes: 4096 };
  router.add('get', '/who', opts, (ex) => ex.send(200, ex.remoteAddress));
  router.add('get', '/sleep/:ms', opts, async (ex) => {
    await new Promise((r) => setTimeout(r, Number(ex.params[0])));
    ex.send(200, `slept ${ex.params[0]}`);
  });
  router.add('post', '/echo', opts, async (ex) => ex.send(200, String((await ex.body).length)));
  router.add('get', '/big', opts, (ex) => {
    bigAnswers++;
    ex.send(200, BIG);
  });
  router.fallback(4096);
  return router;
}

const listener = await listenPublic(testRouter(), SETTINGS);
t.teardown(() => {
  listener.close();
  listener.destroyConnections();
});
const port = listener.port;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const within = (t: Test, ms: number, deadline: number, what: string) =>
  t.ok(ms >= deadline - EARLY_MS && ms <= deadline + LATE_MS, `${what}: ${ms} ms (deadline ${deadline} ms)`);

/** The 408 the server answers a stalled request with: the envelope, and the connection closes. */
function isTimeout(t: Test, r: HttpResponse | undefined, what: string): void {
  t.equal(r?.status, 408, `${what}: 408`);
  t.equal(r?.code, 'request_timeout', `${what}: the request_timeout envelope`);
  t.equal(r && header(r, 'connection'), 'close', `${what}: connection: close`);
}

/**
 * A raw client that writes on its own schedule and records what it receives
 * and when: `answered` is when the n-th response was complete, `ended` how the
 * connection ended (the server's FIN, or a reset) and when.
 */
class Client {
  readonly socket: net.Socket;
  readonly connected: Promise<number>;
  readonly ended: Promise<{ at: number; how: 'fin' | 'reset' }>;
  private chunks: Buffer[] = [];
  private answeredAt: number[] = [];

  constructor() {
    let ended!: (e: { at: number; how: 'fin' | 'reset' }) => void;
    this.ended = new Promise((r) => (ended = r));
    this.socket = net.connect(port, '127.0.0.1');
    this.socket.setNoDelay(true);
    this.connected = new Promise((r) => this.socket.once('connect', () => r(Date.now())));
    this.socket.on('data', (d: Buffer) => {
      this.chunks.push(d);
      const finals = this.responses().filter((r) => r.status >= 200).length;
      while (this.answeredAt.length < finals) this.answeredAt.push(Date.now());
    });
    this.socket.on('end', () => ended({ at: Date.now(), how: 'fin' }));
    this.socket.on('error', () => ended({ at: Date.now(), how: 'reset' }));
    this.socket.on('close', () => ended({ at: Date.now(), how: 'reset' }));
  }

  get open(): boolean {
    return !this.socket.destroyed && this.socket.readyState === 'open';
  }

  write(data: string | Buffer): void {
    if (this.open) this.socket.write(data);
  }

  responses(): HttpResponse[] {
    return parseResponses(Buffer.concat(this.chunks)).responses;
  }

  /** When the n-th final response was complete. */
  async answered(n = 0, timeoutMs = 8_000): Promise<number> {
    for (let waited = 0; this.answeredAt.length <= n && waited < timeoutMs; waited += 10) await sleep(10);
    return this.answeredAt[n] ?? NaN;
  }

  /**
   * Writes `pieces` one every `everyMs` until they run out, the connection ends
   * or something is answered; resolves with the time it connected, when the
   * first piece is written.
   */
  trickle(pieces: readonly (string | Buffer)[], everyMs: number): Promise<number> {
    return this.connected.then((at) => {
      void (async () => {
        for (const piece of pieces) {
          if (!this.open || this.responses().length > 0) return;
          this.write(piece);
          await sleep(everyMs);
        }
      })();
      return at;
    });
  }
}

const lines = (n: number) => Array.from({ length: n }, (_, i) => `x-slow-${i}: ${i}\r\n`);

t.test('slowloris: a head trickled a line every 300 ms, never finished, gets 408 then FIN', async (t) => {
  const pieces = ['GET /who HTTP/1.1\r\nhost: x\r\n', ...lines(20)];
  const c = await converse(port, pieces, { gapMs: 300, timeoutMs: HEAD_MS + 4_000 });
  t.same(c.responses.map((r) => r.status), [408], transcript(pieces, c));
  isTimeout(t, c.responses[0], 'slowloris');
  t.equal(c.ending, 'closed', 'FIN after the 408');
  t.ok(c.elapsedMs >= HEAD_MS - EARLY_MS && c.elapsedMs <= HEAD_MS + 1_500, `within the head deadline + 1.5 s (${c.elapsedMs} ms)`);
});

t.test('20 slowloris clients in parallel: none is left open after the head deadline', async (t) => {
  const clients = Array.from({ length: 20 }, () => new Client());
  const started = Date.now();
  await Promise.all(clients.map((c) => c.trickle(['GET /who HTTP/1.1\r\n', 'host: x\r\n', ...lines(30)], 300)));
  let closed = 0;
  for (const c of clients) void c.ended.then(() => closed++);
  while (closed < 20 && Date.now() - started < HEAD_MS + LATE_MS) await sleep(20);
  t.equal(closed, 20, `${20 - closed} of 20 still open ${Date.now() - started} ms in`);
  for (const [i, c] of clients.entries()) {
    t.same(c.responses().map((r) => r.code), ['request_timeout'], `client ${i}: its 408`);
    t.equal((await c.ended).how, 'fin', `client ${i}: FIN`);
  }
});

t.test('a body that stops arriving gets 408 after the body deadline: sent slowly, or chunked and stalled', async (t) => {
  // Side by side: each on its own connection, the sweep serves both.
  const slow = new Client();
  const stalled = new Client();
  const [slowAt, stalledAt] = await Promise.all([
    // Content-Length 1000, 10 bytes every 200 ms: 20 s to send it all.
    slow.trickle(['POST /echo HTTP/1.1\r\nhost: x\r\ncontent-length: 1000\r\n\r\n', ...Array.from({ length: 100 }, () => 'x'.repeat(10))], 200),
    stalled.trickle(['POST /echo HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\na\r\n0123456789\r\n5\r\n01'], 0),
  ]);
  for (const [what, c, since] of [['slow body', slow, slowAt], ['stalled chunked body', stalled, stalledAt]] as const) {
    const at = await c.answered();
    t.same(c.responses().map((r) => r.status), [408], `${what}: the 408 only`);
    isTimeout(t, c.responses()[0], what);
    within(t, at - since, BODY_MS, `${what}: answered`);
    t.equal((await c.ended).how, 'fin', `${what}: FIN`);
  }
});

t.test('idle connections: closed by FIN (no 408) after the idle timeout, whenever their last answer came', async (t) => {
  // Opened together, then each sends its one request 300 ms after the one before: over 1.2 s,
  // some are answered well after a sweep, whatever the sweep's phase. The idle time counts from
  // the answer, not from the sweep before it (the coarse clock's last tick).
  const clients = Array.from({ length: 5 }, () => new Client());
  await Promise.all(clients.map((c) => c.connected));
  const quiet = new Client(); // never sends a byte
  const quietSince = await quiet.connected;
  for (const [i, c] of clients.entries()) {
    await sleep(i === 0 ? 0 : 300);
    c.write('GET /who HTTP/1.1\r\nhost: x\r\n\r\n');
  }
  for (const [i, c] of clients.entries()) {
    const answeredAt = await c.answered();
    const ended = await c.ended;
    t.same(c.responses().map((r) => r.status), [200], `client ${i}: its answer and nothing more`);
    t.equal(ended.how, 'fin', `client ${i}: FIN`);
    within(t, ended.at - answeredAt, IDLE_MS, `client ${i} closed after its answer`);
  }
  const quietEnd = await quiet.ended;
  t.same(quiet.responses(), [], 'the connection that never sent a byte: no answer');
  t.equal(quietEnd.how, 'fin', '…closed by FIN');
  within(t, quietEnd.at - quietSince, IDLE_MS, 'never a byte: closed');
});

t.test('a pipelined request behind a slow handler, its head incomplete: the first answer, then the 408, in order', async (t) => {
  const c = new Client();
  const sentAt = await c.trickle(['GET /sleep/2300 HTTP/1.1\r\nhost: x\r\n\r\nGET /who HTTP/1.1\r\nhost: x\r\n'], 0);
  const first = await c.answered(0);
  const second = await c.answered(1);
  const ended = await c.ended;
  const [slept, timeout] = c.responses();
  t.equal(slept?.body.toString(), 'slept 2300', 'the slow answer first');
  t.equal(header(slept!, 'connection'), undefined);
  isTimeout(t, timeout, 'then the stalled head');
  t.ok(first - sentAt >= 2_300 - EARLY_MS, `the slow answer after its handler (${first - sentAt} ms)`);
  // The head's deadline passed while the handler worked: the 408 was waiting, and follows at once.
  t.ok(second - first < 500, `the 408 right after it (${second - first} ms)`);
  t.equal(ended.how, 'fin');
});

t.test('a client that never reads its answers is cut off after the idle timeout; the server holds little for it', async (t) => {
  // Its own server, as listenPublic makes it, to see the connection count.
  const router = testRouter();
  const server = new HttpServer({
    bodyLimits: { events: 4096, other: 4096 },
    headTimeoutMs: HEAD_MS,
    bodyTimeoutMs: BODY_MS,
    idleTimeoutMs: IDLE_MS,
    proxyProtocolFrom: [],
    dispatch: (connection, head, body) => router.dispatch(connection, head, body),
  });
  const bigPort = await server.listen('127.0.0.1', 0);
  t.teardown(() => {
    server.close();
    server.destroyAll();
  });
  const requests = 20_000;
  bigAnswers = 0;
  const socket = net.connect({ port: bigPort, host: '127.0.0.1' });
  // Never read: the kernel's receive buffer fills, then the server's send buffer.
  socket.pause();
  let error: string | null = null;
  let closed = false;
  socket.on('error', (err: NodeJS.ErrnoException) => (error = err.code ?? err.message));
  socket.on('close', () => (closed = true));
  await new Promise((r) => socket.once('connect', r));
  const startedAt = Date.now();
  socket.write('GET /big HTTP/1.1\r\nhost: x\r\n\r\n'.repeat(requests));
  await sleep(300);
  t.equal(server.connectionCount, 1, 'open while the buffers fill');
  let cutAt = 0;
  for (; Date.now() - startedAt < IDLE_MS + LATE_MS + 1_000; await sleep(20)) {
    if (server.connectionCount === 0) {
      cutAt = Date.now() - startedAt;
      break;
    }
  }
  t.ok(cutAt > 0, `the connection is gone from the server (${cutAt} ms)`);
  within(t, cutAt, IDLE_MS, 'cut off');
  t.ok(bigAnswers < requests / 20, `answers written while nobody read were bounded by the buffers: ${bigAnswers} of ${requests}`);
  // Reading now finds the connection reset: the server did not wait to be read.
  socket.resume();
  let received = 0;
  socket.on('data', (d: Buffer) => (received += d.length));
  for (let i = 0; i < 100 && !closed; i++) await sleep(20);
  t.ok(closed, `the client's socket closed (${error ?? 'FIN'})`);
  t.match(error ?? 'FIN', /^(ECONNRESET|EPIPE)$/, 'by a reset: the server did not linger for a client that does not read');
  t.ok(received < requests * BIG.length, 'not everything was answered');
});

t.test('no false positives: a slow but steady body, and a head trickled within its deadline, are served', async (t) => {
  // As above: opened together, started 300 ms apart over 1.2 s, so that some start well after a
  // sweep: a deadline counts from the request's first byte, not from the coarse clock's last tick.
  const bodies = Array.from({ length: 5 }, () => new Client());
  const heads = Array.from({ length: 5 }, () => new Client());
  await Promise.all([...bodies, ...heads].map((c) => c.connected));
  const body = ['POST /echo HTTP/1.1\r\nhost: x\r\ncontent-length: 100\r\n\r\n', ...Array.from({ length: 10 }, () => '0123456789')];
  const head = ['GET /who HTTP/1.1\r\n', 'host: x\r\n', 'x-a: 1\r\n', 'x-b: 2\r\n', '\r\n'];
  for (let i = 0; i < 5; i++) {
    // The body takes 1000 ms of its 1500; the head 600 ms of its 1000.
    void bodies[i]!.trickle(body, 100);
    void heads[i]!.trickle(head, 150);
    await sleep(300);
  }
  for (const [i, c] of bodies.entries()) {
    await c.answered();
    t.same(c.responses().map((r) => `${r.status} ${r.body.toString()}`), ['200 100'], `steady body ${i}: served`);
  }
  for (const [i, c] of heads.entries()) {
    await c.answered();
    t.same(c.responses().map((r) => `${r.status} ${r.body.toString()}`), ['200 127.0.0.1'], `trickled head ${i}: served`);
  }
  for (const c of [...bodies, ...heads]) c.socket.destroy();
});
