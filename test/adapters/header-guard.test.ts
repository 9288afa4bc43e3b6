import t from 'tap';
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
const server = { port: 0, host: '127.0.0.1', maxBodyBytes: 1024, maxManagementBodyBytes: 1024, drainTimeoutMs: 1000, headerGuard: true };
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
