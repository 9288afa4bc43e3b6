import { parentPort, workerData } from 'node:worker_threads';
import { HeaderGuard, type HeaderGuardOptions } from '../http/header-guard.js';

/**
 * The header guard's thread. The relay is socket work (read, scan a head,
 * write) that would otherwise queue behind ingress on the main event loop,
 * adding a loop turn of latency to every request in each direction; on its own
 * thread it runs beside it.
 *
 * Messages: in `{ type: 'close' }` (stop accepting), `{ type: 'destroy' }`
 * (end open connections); out `{ type: 'listening', port }` or
 * `{ type: 'error', message }`.
 */
const guard = new HeaderGuard(workerData as HeaderGuardOptions);
const port = parentPort!;
guard.listen().then(
  (listening) => port.postMessage({ type: 'listening', port: listening }),
  (err: Error) => port.postMessage({ type: 'error', message: err.message }),
);
port.on('message', (msg: { type: string }) => {
  if (msg.type === 'close') guard.close();
  else if (msg.type === 'destroy') {
    guard.destroyAll();
    port.close();
  }
});
