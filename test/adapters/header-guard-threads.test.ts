import { join } from 'node:path';
import t from 'tap';
import uWS from 'uWebSockets.js';
import { listenPublic } from '../../src/http/listen.js';
import { createLogger } from '../../src/observability/logger.js';
import { rawRequest } from '../helpers/raw-http.js';

/**
 * A threaded node's port (docs/threads.md): the header guard relays each new
 * connection to the next thread's uWS in turn; a thread taken out of the
 * relay gets no more connections.
 */
const app = (name: string) =>
  uWS.App().get('/who', (res) => {
    res.end(name);
  });
const main = app('main');
const server = { port: 0, host: '127.0.0.1', maxBodyBytes: 1024, maxManagementBodyBytes: 1024, drainDelayMs: 0, shutdownTimeoutMs: 1000, headerGuard: true, proxyProtocolFrom: [], metricsPort: 0 };
const listener = await listenPublic(main, server, createLogger('silent'));
const other = app('other');
const path = join(listener.privateDir!, 'thread-1.sock');
const token = await new Promise<uWS.us_listen_socket>((resolve, reject) => other.listen_unix((tk) => (tk ? resolve(tk) : reject(new Error('listen'))), path));
t.teardown(() => {
  uWS.us_listen_socket_close(token);
  listener.close();
  listener.destroyConnections();
});
const ask = async () => (await rawRequest(listener.port, Buffer.from('GET /who HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n'), 3_000)).body;

t.test('with one thread, every connection goes to it', async (t) => {
  t.same([await ask(), await ask(), await ask()], ['main', 'main', 'main']);
});

t.test('with two threads, connections alternate between them', async (t) => {
  listener.setThreadUpstreams!([path]);
  // The guard thread takes the new list with its next message: give it a moment.
  await new Promise((r) => setTimeout(r, 100));
  const answers = [];
  for (let i = 0; i < 6; i++) answers.push(await ask());
  t.equal(answers.filter((a) => a === 'main').length, 3);
  t.equal(answers.filter((a) => a === 'other').length, 3);
});

t.test('a thread taken out of the relay gets no more connections', async (t) => {
  listener.setThreadUpstreams!([]);
  await new Promise((r) => setTimeout(r, 100));
  t.same([await ask(), await ask(), await ask(), await ask()], ['main', 'main', 'main', 'main']);
});
