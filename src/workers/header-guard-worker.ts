import { parentPort, workerData } from 'node:worker_threads';
import { HeaderGuard, type HeaderGuardOptions } from '../http/header-guard.js';

/**
 * The header guard's thread. The relay is socket work (read, scan a head,
 * write) that would otherwise queue behind ingress on the main event loop,
 * adding a loop turn of latency to every request in each direction; on its own
 * thread it runs beside it.
 *
 * Messages: in `{ type: 'close' }` (stop accepting), `{ type: 'drain', idleMs }`
 * (end idle connections, answer `{ type: 'drained' }` once none is open), `{ type: 'destroy' }`
 * (end open connections), `{ type: 'upstreams', paths }` (the uWS sockets of
 * a threaded node's threads, taken in turn); out `{ type: 'listening', port }` or
 * `{ type: 'error', message }`.
 */
const guard = new HeaderGuard(workerData as HeaderGuardOptions);
const port = parentPort!;
guard.listen().then(
  (listening) => port.postMessage({ type: 'listening', port: listening }),
  (err: Error) => port.postMessage({ type: 'error', message: err.message }),
);
port.on('message', (msg: { type: string; paths?: string[]; idleMs?: number }) => {
  if (msg.type === 'close') guard.close();
  else if (msg.type === 'drain') guard.drain(msg.idleMs ?? 0, () => port.postMessage({ type: 'drained' }));
  else if (msg.type === 'upstreams') guard.setUpstreams(msg.paths ?? []);
  else if (msg.type === 'destroy') {
    guard.destroyAll();
    port.close();
  }
});
