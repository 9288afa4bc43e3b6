// Frozen copy of the header guard as of commit 2bf0853 (transpiled from
// src/workers/header-guard-worker.ts by tsc, module NodeNext, target ES2022; imports made local).
// Kept only so bench/ingress-modes.mjs (and bench/relay-floor.mjs) can compare
// the old guard with the new front in the same run, through
// STREAMGATE_GUARD_WORKER. Not part of streamgate: delete this folder once the
// A/B is recorded.
import { parentPort, workerData } from 'node:worker_threads';
import { HeaderGuard } from './header-guard.js';
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
const guard = new HeaderGuard(workerData);
const port = parentPort;
guard.listen().then((listening) => port.postMessage({ type: 'listening', port: listening }), (err) => port.postMessage({ type: 'error', message: err.message }));
port.on('message', (msg) => {
    if (msg.type === 'close')
        guard.close();
    else if (msg.type === 'destroy') {
        guard.destroyAll();
        port.close();
    }
});
