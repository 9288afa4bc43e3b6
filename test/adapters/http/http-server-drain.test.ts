import t from 'tap';
import net from 'node:net';
import { listenPublic, type ListenSettings, type PublicListener } from '../../../src/http/listen.js';
import { Router } from '../../../src/http/router.js';
import { createLogger } from '../../../src/observability/logger.js';
import { header, parseResponses } from '../../helpers/http-conversation.js';

/**
 * The server's connection drain (graceful shutdown, src/node/node.ts: the router's
 * lifecycle says closing, the listener closes, then drainConnections): a
 * request in flight or still arriving gets its whole answer with
 * `connection: close`, a kept-alive connection is closed only once it has sat
 * idle (500 ms), and the drain ends when no connection is left, or at its
 * deadline when one never finishes.
 */

const SETTINGS: ListenSettings = {
  host: '127.0.0.1',
  port: 0,
  maxBodyBytes: 1024,
  maxManagementBodyBytes: 1024,
  proxyProtocolFrom: [],
  headTimeoutMs: 10_000,
  bodyTimeoutMs: 30_000,
  idleTimeoutMs: 10_000,
};

function testRouter(): Router {
  const router = new Router(createLogger('silent'));
  const opts = { maxBodyBytes: 1024 };
  router.add('get', '/slow', opts, async (ex) => {
    await new Promise((r) => setTimeout(r, 300));
    ex.send(200, 'slow done');
  });
  router.add('get', '/never', opts, () => new Promise<void>(() => {}));
  router.add('get', '/fast', opts, (ex) => ex.send(200, 'fast'));
  router.fallback(1024);
  return router;
}

async function drainable(settings: Partial<ListenSettings> = {}): Promise<{ listener: PublicListener; router: Router }> {
  const router = testRouter();
  const listener = await listenPublic(router, { ...SETTINGS, ...settings });
  t.teardown(() => {
    listener.close();
    listener.destroyConnections();
  });
  return { listener, router };
}

/** What src/node/node.ts does when it stops: answers say `connection: close` from now on, and the port closes. */
function stopAccepting(listener: PublicListener, router: Router): number {
  router.lifecycle.closing = true;
  listener.close();
  return Date.now();
}

interface Client {
  socket: net.Socket;
  received: () => string;
  /** When the server's FIN arrived (or the connection reset), and which. */
  ended: Promise<{ at: number; how: 'fin' | 'reset' }>;
}

/** A kept-alive connection: writes `request` (if any) and records what comes back and how it ends. */
function open(port: number, request?: string): Promise<Client> {
  return new Promise((resolve) => {
    let out = '';
    let ended!: (end: { at: number; how: 'fin' | 'reset' }) => void;
    const endedAt = new Promise<{ at: number; how: 'fin' | 'reset' }>((r) => (ended = r));
    const socket = net.connect(port, '127.0.0.1', () => {
      if (request) socket.write(request);
      resolve({ socket, received: () => out, ended: endedAt });
    });
    socket.on('data', (d: Buffer) => (out += d.toString('latin1')));
    socket.on('end', () => ended({ at: Date.now(), how: 'fin' }));
    socket.on('error', () => ended({ at: Date.now(), how: 'reset' }));
    socket.on('close', () => ended({ at: Date.now(), how: 'reset' }));
  });
}
const get = (path: string) => `GET ${path} HTTP/1.1\r\nhost: x\r\n\r\n`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const until = async (done: () => boolean) => {
  for (let i = 0; i < 300 && !done(); i++) await sleep(10);
};
const answers = (c: Client) => parseResponses(Buffer.from(c.received(), 'latin1')).responses;

t.test('a closed listener drains: busy connections answered in full with connection: close, idle ones closed after a while, then done', async (t) => {
  const { listener, router } = await drainable();
  const idle = await open(listener.port, get('/fast'));
  await until(() => idle.received().includes('fast'));
  const busy = await open(listener.port, get('/slow'));
  // A request still arriving when the drain starts: its head is finished 700 ms in, past the 500 ms of idle.
  const arriving = await open(listener.port, 'GET /fast HTTP/1.1\r\n');
  // Pipelined behind a slow one: the first answer closes the connection, the second is left for a retry.
  const pipelined = await open(listener.port, get('/slow') + get('/fast'));
  await sleep(50);

  const startedAt = stopAccepting(listener, router);
  const drained = listener.drainConnections(startedAt + 5_000).then(() => Date.now());
  await sleep(700);
  arriving.socket.write('host: x\r\n\r\n');
  const drainedAt = await drained;

  t.match(busy.received(), /^HTTP\/1\.1 200 OK\r\n[^]*\r\n\r\nslow done$/, 'the request in flight got its whole answer');
  t.equal(header(answers(busy)[0]!, 'connection'), 'close', '…saying the connection closes');
  t.equal((await busy.ended).how, 'fin', '…then FIN');

  console.error('ARRIVING', JSON.stringify(arriving.received()), await arriving.ended, startedAt);
  t.same(answers(arriving).map((r) => r.body.toString()), ['fast'], 'the request arriving during the drain was not cut off');
  t.equal(header(answers(arriving)[0]!, 'connection'), 'close');
  t.equal((await arriving.ended).how, 'fin');

  t.same(answers(pipelined).map((r) => r.body.toString()), ['slow done'], 'one answer on the pipelined connection');
  t.equal(header(answers(pipelined)[0]!, 'connection'), 'close', 'it says the rest will not be answered');
  t.equal((await pipelined.ended).how, 'fin', 'FIN, not a reset that could destroy the answer');

  t.match(idle.received(), /^HTTP\/1\.1 200 OK\r\n[^]*\r\n\r\nfast$/, 'the idle connection got nothing more than its answer');
  t.equal(header(answers(idle)[0]!, 'connection'), undefined, 'answered before the drain: kept alive');
  const idleEnd = await idle.ended;
  t.equal(idleEnd.how, 'fin');
  t.ok(idleEnd.at - startedAt >= 450, `the idle connection was closed after sitting idle (${idleEnd.at - startedAt} ms into the drain)`);
  t.ok(drainedAt - startedAt >= 650 && drainedAt - startedAt < 2_500, `the drain ended once no connection was open (${drainedAt - startedAt} ms), well before its deadline`);
});

t.test('a connection that was idle sends a request just as the drain starts: answered, not cut off', async (t) => {
  const { listener, router } = await drainable();
  const clients = await Promise.all(Array.from({ length: 5 }, () => open(listener.port, get('/fast'))));
  await until(() => clients.every((c) => c.received().includes('fast')));
  // Idle for ~0.8 s by the time the drain starts: their next request must not find them closed.
  await sleep(800);
  const startedAt = stopAccepting(listener, router);
  const drained = listener.drainConnections(startedAt + 5_000);
  // Within the drain's first 250 ms: well inside the 500 ms a connection may sit idle before it is closed.
  for (const c of clients) {
    c.socket.write(get('/fast'));
    await sleep(60);
  }
  await drained;
  for (const c of clients) {
    t.same(answers(c).map((r) => r.body.toString()), ['fast', 'fast'], 'both answers');
    t.equal(header(answers(c)[1]!, 'connection'), 'close');
    t.equal((await c.ended).how, 'fin');
  }
});

t.test('a request that never finishes: the drain gives up at its deadline', async (t) => {
  const { listener, router } = await drainable();
  const stuck = await open(listener.port, get('/never'));
  await sleep(50);
  const startedAt = stopAccepting(listener, router);
  await listener.drainConnections(startedAt + 800);
  const took = Date.now() - startedAt;
  t.ok(took >= 750 && took < 1_500, `returned at the deadline (${took} ms)`);
  t.equal(stuck.received(), '', 'nothing was answered for it (the node ends it after the drain)');
  const destroyedAt = Date.now();
  listener.destroyConnections();
  t.ok((await stuck.ended).at - destroyedAt < 1_000, 'destroyConnections ends it');
});

t.test("the slow-client deadlines still run during a drain: a slowloris does not hold it to the drain's deadline", async (t) => {
  const { listener, router } = await drainable({ headTimeoutMs: 1_000 });
  const slow = await open(listener.port, 'GET /fast HTTP/1.1\r\n');
  const trickle = setInterval(() => slow.socket.writable && slow.socket.write('x-slow: 1\r\n'), 300);
  t.teardown(() => clearInterval(trickle));
  const startedAt = stopAccepting(listener, router);
  await listener.drainConnections(startedAt + 8_000);
  const took = Date.now() - startedAt;
  clearInterval(trickle);
  t.ok(took < 3_500, `the drain ended with the head deadline (${took} ms), not at its own`);
  t.equal((await slow.ended).how, 'fin');
  t.same(answers(slow).map((r) => r.code), ['request_timeout'], 'its 408');
});

t.test('a drain cut short by destroyConnections (or by a second drain) still returns to whoever awaits it', async (t) => {
  const { listener, router } = await drainable();
  const stuck = await open(listener.port, get('/never'));
  await sleep(50);
  const startedAt = stopAccepting(listener, router);
  const first = listener.drainConnections(startedAt + 60_000);
  const second = listener.drainConnections(startedAt + 60_000);
  await first;
  t.ok(Date.now() - startedAt < 1_000, 'the first drain returned when the second began');
  setTimeout(() => listener.destroyConnections(), 100);
  await second;
  t.ok(Date.now() - startedAt < 2_000, 'the second returned at destroyConnections, not at its 60 s deadline');
  await stuck.ended;
});
