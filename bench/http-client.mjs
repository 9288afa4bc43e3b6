/**
 * `node bench/http-client.mjs [requests]` (needs `npm run build` once): the
 * HTTP clients delivery can use for http: targets — undici through
 * dist/delivery/http/undici-client.js (SSRF-guarded connect, a dispatch handler on
 * undici 8's controller interface), streamgate's own Http1Pool (dist/delivery/http/http1-pool.js) and
 * node:http with a keep-alive agent — alternating for BENCH_ROUNDS rounds
 * (default 3; the order rotates each round). 64 requests in flight over at
 * most 16 connections, 1 KB bodies, a node:http receiver in a child process
 * (its CPU is not counted). Prints requests/s and the client's CPU µs per
 * request, then each client's median over the rounds. Results: bench/results/http-client.md
 * (written by hand). Http1Pool stays only while undici costs at least 15 % more
 * CPU per request than it does.
 */
import { fork } from 'node:child_process';
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import { Http1Pool } from '../dist/delivery/http/http1-pool.js';
import { SsrfGuard } from '../dist/delivery/http/ssrf-guard.js';
import { UndiciClient } from '../dist/delivery/http/undici-client.js';

if (process.argv[2] === 'receiver') {
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => res.end());
  });
  server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
} else {
  const requests = Number(process.argv[2] ?? 60_000);
  const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
  const child = fork(fileURLToPath(import.meta.url), ['receiver']);
  const port = await new Promise((resolve) => child.once('message', (m) => resolve(m.port)));
  const body = Buffer.alloc(1024, 'x');
  const headers = () => ({
    'content-type': 'application/json',
    'x-service-event-id': 'evt_abcdefghijklmnopqrstuvwx',
    'x-service-timestamp': '1700000000',
    'x-service-signature': `v1,${'a'.repeat(44)}`,
    'content-length': String(body.length),
  });
  const clients = {
    'node:http': () => {
      const agent = new http.Agent({ keepAlive: true, maxSockets: 16, scheduling: 'lifo' });
      const send = () =>
        new Promise((resolve, reject) => {
          const req = http.request({ host: '127.0.0.1', port, path: '/in', method: 'POST', agent, headers: headers() }, (res) => {
            res.on('data', () => {});
            res.on('end', () => resolve(res.statusCode));
          });
          req.on('error', reject);
          req.end(body);
        });
      return { send, close: () => agent.destroy() };
    },
    undici: () => {
      const client = new UndiciClient(new SsrfGuard(['127.0.0.0/8']), 16, 65_536);
      const origin = `http://127.0.0.1:${port}`;
      return {
        send: () => client.post(origin, '/in', headers(), body, () => {}).then((r) => (r.kind === 'response' ? r.status : Promise.reject(new Error(r.error)))),
        close: () => client.close(),
      };
    },
    http1: () => {
      const pool = new Http1Pool(undefined, 65_536);
      const target = { host: `127.0.0.1:${port}`, hostname: '127.0.0.1', port, path: '/in', auth: null };
      return { send: () => pool.post(target, headers(), body, 30_000).then((r) => r.status), close: () => pool.close() };
    },
  };
  const names = Object.keys(clients);
  const results = Object.fromEntries(names.map((n) => [n, { cpu: [], rps: [] }]));
  for (let round = 1; round <= rounds; round++) {
    // Rotate who goes first, so no client always runs on a cold (or warm) process.
    const order = names.map((_, i) => names[(i + round - 1) % names.length]);
    for (const name of order) {
      const make = clients[name];
      const client = make();
      let started = 0;
      let slots = 16; // OriginSlots' job in the dispatcher: at most 16 in flight per origin
      const waiting = [];
      const run = async () => {
        while (started < requests) {
          started++;
          if (slots === 0) await new Promise((resolve) => waiting.push(resolve));
          else slots--;
          const status = await client.send();
          const next = waiting.shift();
          if (next) next();
          else slots++;
          if (status !== 200) throw new Error(`status ${status}`);
        }
      };
      const t0 = performance.now();
      const cpu0 = process.cpuUsage();
      await Promise.all(Array.from({ length: 64 }, run));
      const cpu = process.cpuUsage(cpu0);
      const seconds = (performance.now() - t0) / 1000;
      await client.close();
      const us = (cpu.user + cpu.system) / requests;
      results[name].cpu.push(us);
      results[name].rps.push(requests / seconds);
      console.log(`round ${round}, ${name}: ${Math.round(requests / seconds)} req/s, client CPU ${us.toFixed(1)} µs/request`);
    }
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  console.log('\nmedian over rounds:');
  for (const name of names) {
    console.log(`  ${name}: ${Math.round(median(results[name].rps))} req/s, client CPU ${median(results[name].cpu).toFixed(1)} µs/request`);
  }
  const u = median(results.undici.cpu);
  const h = median(results.http1.cpu);
  console.log(`undici / Http1Pool CPU per request: ${((u / h - 1) * 100).toFixed(1)} %`);
  child.kill();
}
