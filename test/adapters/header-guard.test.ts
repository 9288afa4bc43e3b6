import t from 'tap';
import net from 'node:net';
import uWS from 'uWebSockets.js';
import { listenPublic } from '../../src/http/listen.js';
import { createLogger } from '../../src/observability/logger.js';
import { rawRequest } from '../helpers/raw-http.js';

/**
 * The header guard in front of a real uWS app: requests pass through with the
 * client's address, and a guard thread that dies is replaced on the same port.
 */
const app = uWS.App();
app.get('/who', (res) => {
  res.onAborted(() => {});
  res.end(Buffer.from(res.getProxiedRemoteAddressAsText()).toString());
});
// Answers after a while: uWS 20.30 drops a connection that pipelines behind a pending answer.
app.get('/slow/:n', (res, req) => {
  const n = req.getParameter(0);
  let aborted = false;
  res.onAborted(() => (aborted = true));
  setTimeout(() => aborted || res.cork(() => res.end(`slow ${n} from ${Buffer.from(res.getProxiedRemoteAddressAsText()).toString()}`)), 30);
});
// A handler that drops the connection without answering.
app.get('/drop', (res) => {
  res.close();
});
const server = { port: 0, host: '127.0.0.1', maxBodyBytes: 1024, maxManagementBodyBytes: 1024, drainDelayMs: 0, shutdownTimeoutMs: 1000, headerGuard: true, proxyProtocolFrom: [], metricsPort: 0 };
const listener = await listenPublic(app, server, createLogger('silent'));
t.teardown(() => {
  listener.close();
  listener.destroyConnections();
});
const ask = () => rawRequest(listener.port, Buffer.from('GET /who HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n'), 3_000);

t.test('a request passes through the guard; uWS sees the client address from the PROXY header', async (t) => {
  const res = await ask();
  t.equal(res.status, 200);
  t.equal(res.body, '127.0.0.1');
});

/** Writes `bytes` on one connection and reads until the server closes (or `ms` pass). */
function converse(bytes: string | Buffer, ms = 2_000): Promise<string> {
  return new Promise((resolve) => {
    const socket = net.connect(listener.port, '127.0.0.1', () => socket.end(bytes));
    let out = '';
    socket.on('data', (d: Buffer) => (out += d.toString('latin1')));
    const timer = setTimeout(() => socket.destroy(), ms);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(out);
    });
    socket.on('error', () => {});
  });
}
const statuses = (out: string) => [...out.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => Number(m[1]));

t.test('pipelined requests to slow handlers: every one answered, in order, on one connection', async (t) => {
  const get = (path: string) => `GET ${path} HTTP/1.1\r\nhost: x\r\n\r\n`;
  const out = await converse(get('/slow/1') + get('/slow/2') + get('/who') + get('/slow/3'));
  t.same(statuses(out), [200, 200, 200, 200]);
  t.match(out, /slow 1 from 127\.0\.0\.1[\s\S]*slow 2 from[\s\S]*127\.0\.0\.1[\s\S]*slow 3 from/);
});

t.test("a client's PROXY header is refused wherever it is, and never names the client", async (t) => {
  const proxy = Buffer.from([0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a, 0x21, 0x11, 0x00, 0x0c, 203, 0, 113, 7, 127, 0, 0, 1, 0x30, 0x39, 0x00, 0x50]);
  const get = Buffer.from('GET /slow/p HTTP/1.1\r\nhost: x\r\n\r\n');
  const first = await converse(Buffer.concat([proxy, get]));
  t.same(statuses(first), [400], 'at the start');
  const later = await converse(Buffer.concat([get, proxy, get]));
  t.same(statuses(later), [200, 400], 'after a first request on the same connection');
  t.notMatch(later, /203\.0\.113/);
  t.match(later, /slow p from 127\.0\.0\.1/);
});

t.test('a HEAD is answered without a body, and the next answer follows at once', async (t) => {
  const out = await converse('HEAD /who HTTP/1.1\r\nhost: x\r\n\r\nGET /who HTTP/1.1\r\nhost: x\r\n\r\n');
  t.same(statuses(out), [200, 200]);
  t.match(out, /^HTTP\/1\.1 200 OK\r\n[^]*?\r\n\r\nHTTP\/1\.1 200 OK\r\n[^]*?\r\n\r\n127\.0\.0\.1$/);
});

t.test('a handler that drops the connection unanswered: the client still gets an answer (503 unavailable)', async (t) => {
  const out = await converse('GET /drop HTTP/1.1\r\nhost: x\r\n\r\n');
  t.same(statuses(out), [503]);
  t.match(out, /"code":"unavailable"/);
});

t.test('a guard thread that dies is started again on the same port', async (t) => {
  await listener.__terminateGuard!();
  let res = await ask();
  for (let i = 0; i < 50 && res.status !== 200; i++) {
    await new Promise((r) => setTimeout(r, 100));
    res = await ask();
  }
  t.equal(res.status, 200, 'answered again');
  t.equal(res.body, '127.0.0.1');
});
