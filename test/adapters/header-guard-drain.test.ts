import t from 'tap';
import net from 'node:net';
import uWS from 'uWebSockets.js';
import { listenPublic } from '../../src/http/listen.js';
import { createLogger } from '../../src/observability/logger.js';

/**
 * The header guard's connection drain (graceful shutdown): after the listener
 * closes, a request in flight still gets its whole answer, a kept-alive
 * connection is closed only once it has sat idle, and the drain ends when no
 * connection is left, or at its deadline when one never finishes.
 */
const app = uWS.App();
app.get('/slow', (res) => {
  let aborted = false;
  res.onAborted(() => (aborted = true));
  setTimeout(() => aborted || res.cork(() => res.end('slow done')), 300);
});
app.get('/never', (res) => {
  res.onAborted(() => {});
});
app.get('/fast', (res) => {
  res.end('fast');
});
const server = { port: 0, host: '127.0.0.1', maxBodyBytes: 1024, maxManagementBodyBytes: 1024, drainDelayMs: 0, shutdownTimeoutMs: 1000, headerGuard: true, proxyProtocolFrom: [], metricsPort: 0 };

interface Conversation {
  socket: net.Socket;
  received: () => string;
  endedAt: Promise<number>;
}

/** A kept-alive connection: writes `request` (if any) and records what comes back and when it ends. */
function open(port: number, request?: string): Promise<Conversation> {
  return new Promise((resolve) => {
    let out = '';
    let ended!: (at: number) => void;
    const endedAt = new Promise<number>((r) => (ended = r));
    const socket = net.connect(port, '127.0.0.1', () => {
      if (request) socket.write(request);
      resolve({ socket, received: () => out, endedAt });
    });
    socket.on('data', (d: Buffer) => (out += d.toString('latin1')));
    socket.on('end', () => ended(Date.now()));
    socket.on('close', () => ended(Date.now()));
    socket.on('error', () => {});
  });
}
const get = (path: string) => `GET ${path} HTTP/1.1\r\nhost: x\r\n\r\n`;
const until = async (done: () => boolean) => {
  for (let i = 0; i < 200 && !done(); i++) await new Promise((r) => setTimeout(r, 10));
};

t.test('a closed listener drains: in-flight answered in full, idle connections closed after a while, then done', async (t) => {
  const listener = await listenPublic(app, { ...server }, createLogger('silent'));
  t.teardown(() => listener.destroyConnections());
  const idle = await open(listener.port, get('/fast'));
  await until(() => idle.received().includes('fast'));
  const busy = await open(listener.port, get('/slow'));
  await new Promise((r) => setTimeout(r, 50));

  listener.close();
  const startedAt = Date.now();
  await listener.drainConnections(startedAt + 5_000);
  const drainedAt = Date.now();

  t.match(busy.received(), /^HTTP\/1\.1 200 OK\r\n[^]*\r\n\r\nslow done$/, 'the request in flight got its whole answer');
  t.match(idle.received(), /^HTTP\/1\.1 200 OK\r\n[^]*\r\n\r\nfast$/, 'the idle connection got nothing more than its answer');
  const idleEnd = await idle.endedAt;
  t.ok(idleEnd - startedAt >= 400, `the idle connection was closed after sitting idle (${idleEnd - startedAt} ms into the drain)`);
  t.ok(drainedAt - startedAt < 2_000, `the drain ended once no connection was open (${drainedAt - startedAt} ms), well before its deadline`);
});

t.test('a request that never finishes: the drain gives up at its deadline', async (t) => {
  const listener = await listenPublic(app, { ...server }, createLogger('silent'));
  t.teardown(() => listener.destroyConnections());
  const stuck = await open(listener.port, get('/never'));
  await new Promise((r) => setTimeout(r, 50));
  listener.close();
  const startedAt = Date.now();
  await listener.drainConnections(startedAt + 800);
  const took = Date.now() - startedAt;
  t.ok(took >= 750 && took < 1_500, `returned at the deadline (${took} ms)`);
  t.equal(stuck.received(), '', 'nothing was answered for it (the node ends it after the drain)');
  stuck.socket.destroy();
});
