/**
 * Where a bare baseline server listens, by `relay` (its first argument):
 *   none   uWS owns the TCP port (as streamgate with server.headerGuard off)
 *   guard  uWS on a private Unix socket behind streamgate's own header guard
 *          thread (dist/workers/header-guard-worker.js), as streamgate with
 *          the guard on (the default)
 *   legacy uWS on a Unix socket behind the header guard as of commit 2bf0853
 *          (lib/legacy-guard/header-guard-worker.js, a frozen copy kept for
 *          the A/B against the new front; delete with that folder)
 *   pipe   uWS on a Unix socket behind the least a relay thread can do:
 *          connect, send the PROXY header, pipe both ways, no head scan
 * `pipe` against `none` is what any Node relay costs; `guard` against `pipe`
 * is what the guard's own work (head scan, framing) adds to it; `guard` against
 * `legacy` is the new front against the old guard.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import uWS from 'uWebSockets.js';

const GUARD_WORKER = new URL('../../dist/workers/header-guard-worker.js', import.meta.url);
const LEGACY_GUARD_WORKER = new URL('./legacy-guard/header-guard-worker.js', import.meta.url);

// Runs as a worker (eval): the relay without streamgate's sanitizer.
const PIPE_RELAY = `
const { connect, createServer } = require('node:net');
const { parentPort, workerData } = require('node:worker_threads');
const proxy = Buffer.alloc(16);
Buffer.from([0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a]).copy(proxy);
proxy[12] = 0x20; // PROXY v2 LOCAL: no address
const server = createServer({ noDelay: true }, (client) => {
  const upstream = connect(workerData.upstreamPath);
  upstream.write(proxy);
  client.pipe(upstream);
  upstream.pipe(client);
  const done = () => { client.destroy(); upstream.destroy(); };
  client.on('error', done); client.on('close', done);
  upstream.on('error', done); upstream.on('close', done);
});
server.listen(0, '127.0.0.1', () => parentPort.postMessage({ type: 'listening', port: server.address().port }));
`;

// Runs as a worker (eval): the same job as the front done with Node's own HTTP
// stack (llhttp parses and frames; node:http's client re-serializes over a
// keep-alive pool to uWS), for the A/B of our parser against the library.
// No PROXY header (a pooled connection cannot carry one per client): it does
// less than the front, so it flatters the library.
const LLHTTP_RELAY = `
const http = require('node:http');
const { parentPort, workerData } = require('node:worker_threads');
const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
const server = http.createServer({ maxHeaderSize: workerData.maxHeadBytes }, (req, res) => {
  const headers = [];
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i].toLowerCase();
    if (name !== 'connection' && name !== 'keep-alive' && name !== 'transfer-encoding' && name !== 'expect') headers.push(req.rawHeaders[i], req.rawHeaders[i + 1]);
  }
  const up = http.request({ socketPath: workerData.upstreamPath, method: req.method, path: req.url, headers, agent }, (answer) => {
    res.writeHead(answer.statusCode, answer.rawHeaders);
    answer.pipe(res);
  });
  up.on('error', () => { res.statusCode = 503; res.end(); });
  req.pipe(up);
});
server.keepAliveTimeout = 10000;
server.listen(0, '127.0.0.1', () => parentPort.postMessage({ type: 'listening', port: server.address().port }));
`;

export const RELAYS = ['none', 'guard', 'legacy', 'pipe', 'llhttp'];

/** Listens on 127.0.0.1 (a free port) as `relay` says; resolves with the public port. */
export function listenBare(app, relay = 'none') {
  if (!RELAYS.includes(relay)) throw new Error(`relay must be one of ${RELAYS.join(', ')}, not ${relay}`);
  if (relay === 'none') {
    return new Promise((resolve, reject) => {
      app.listen('127.0.0.1', 0, (token) => (token ? resolve(uWS.us_socket_local_port(token)) : reject(new Error('cannot listen'))));
    });
  }
  const dir = mkdtempSync(join(tmpdir(), 'sg-bare-'));
  const path = join(dir, 'uws.sock');
  process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
  return new Promise((resolve, reject) => {
    app.listen_unix((token) => {
      if (!token) return reject(new Error(`cannot listen on ${path}`));
      // The guard's own limits, as streamgate passes them (1 MiB bodies).
      const workerData = { host: '127.0.0.1', port: 0, upstreamPath: path, maxHeadBytes: 16_384, bodyLimits: { events: 1_048_576, other: 1_048_576 } };
      const worker =
        relay === 'pipe' || relay === 'llhttp'
          ? new Worker(relay === 'pipe' ? PIPE_RELAY : LLHTTP_RELAY, { eval: true, workerData })
          : new Worker(relay === 'legacy' ? LEGACY_GUARD_WORKER : GUARD_WORKER, { workerData });
      worker.once('error', reject);
      worker.once('message', (msg) => (msg.type === 'listening' ? resolve(msg.port) : reject(new Error(msg.message))));
    }, path);
  });
}
