/**
 * `node bench/relay-floor.mjs` (needs `npm run build` once): what the header
 * guard's relay costs, apart from everything else streamgate does.
 *
 *   none   autocannon ──► bare-server.mjs on TCP
 *   pipe   autocannon ──► minimal relay thread ──unix──► bare-server.mjs
 *   guard  autocannon ──► streamgate's guard thread ──unix──► bare-server.mjs
 *
 * The three alternate for --rounds rounds (default 3), so that machine noise
 * hits them alike; each round's figures are ratios to that round's `none`.
 * `pipe / none` is the price of any relay in Node on this box; `guard / pipe`
 * is what the guard's own work (head scan, framing) adds to it. Options as
 * bench/run.mjs (duration, connections, bodyBytes, keys, warmup), plus
 * BENCH_ROUNDS. Results: console and bench/relay-floor.md.
 */
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { readOptions } from './lib/options.mjs';
import { forkChild, stopAll, stopChild, waitForMessage } from './lib/children.mjs';
import { makeBody, makeRequests, runLoad } from './lib/load.mjs';
import { measuredLoad } from './lib/measured-load.mjs';
import { int, pct, table } from './lib/table.mjs';

const BARE_SERVER = fileURLToPath(new URL('./bare-server.mjs', import.meta.url));
const GUARD_WORKER = fileURLToPath(new URL('../dist/workers/header-guard-worker.js', import.meta.url));
const RESULTS = fileURLToPath(new URL('./relay-floor.md', import.meta.url));
const say = (msg) => process.stderr.write(`[bench] ${msg}\n`);
const RELAYS = ['none', 'pipe', 'guard'];

async function main() {
  if (!existsSync(GUARD_WORKER)) throw new Error('dist/ is missing: run `npm run build` first');
  const options = readOptions([]);
  const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
  // The same requests as ingress-modes' API-key load (the key is never checked here).
  const requests = makeRequests({
    path: '/events/ten_bench/bench-api',
    headers: { 'content-type': 'application/json', 'x-api-key': `sk_${'x'.repeat(40)}` },
    body: makeBody(options.bodyBytes),
    keys: options.keys,
  });
  const load = (port, duration) => runLoad({ url: `http://127.0.0.1:${port}`, requests, duration, connections: options.connections, pipelining: 1 });
  const results = [];
  for (let round = 1; round <= rounds; round++) {
    const row = { round };
    for (const relay of RELAYS) {
      const server = forkChild(`bare-${relay}`, BARE_SERVER, [relay]);
      const { port } = await waitForMessage(server, 'ready');
      const result = await measuredLoad((seconds) => load(port, seconds), options, { server: server.pid, autocannon: process.pid });
      await stopChild(server);
      row[relay] = result;
      say(`round ${round}, ${relay}: ${int(result.acceptedPerS)} ev/s, server ${perEvent(result)} µs/event, non-2xx ${result.non2xx}`);
    }
    results.push(row);
  }
  const text = report(options, results);
  process.stdout.write(`\n${text}`);
  await writeFile(RESULTS, text);
  say(`written ${RESULTS}`);
}

const perEvent = (r) => (r.cpu.server == null ? '–' : ((r.cpu.server / 100) * 1e6 / r.acceptedPerS).toFixed(1));

function report(o, results) {
  const rows = results.map(({ round, none, pipe, guard }) => [
    round,
    int(none.acceptedPerS),
    `${int(pipe.acceptedPerS)} (${pct(pipe.acceptedPerS / none.acceptedPerS)})`,
    `${int(guard.acceptedPerS)} (${pct(guard.acceptedPerS / none.acceptedPerS)})`,
    pct(guard.acceptedPerS / pipe.acceptedPerS),
    `${perEvent(none)} / ${perEvent(pipe)} / ${perEvent(guard)}`,
    `${none.p99} / ${pipe.p99} / ${guard.p99}`,
    RELAYS.map((r) => results.find((x) => x.round === round)[r].non2xx).reduce((a, b) => a + b, 0),
  ]);
  return [
    '# the header guard\'s relay against bare uWS and a minimal relay',
    '',
    `- date: ${new Date().toISOString()}`,
    `- node ${process.version}, ${cpus().length} CPUs (${cpus()[0]?.model ?? '?'}); load average at the end ${loadavg().map((l) => l.toFixed(1)).join(' / ')}`,
    `- ${o.duration} s per phase (+${o.warmup} s warm-up), ${o.connections} connections, body ${o.bodyBytes} B JSON; the three servers alternate within each round`,
    '- none: bare uWS on TCP; pipe: bare uWS behind a relay thread that only pipes (PROXY header, then both directions); guard: bare uWS behind streamgate\'s header guard thread',
    '',
    table(['round', 'none ev/s', 'pipe ev/s (vs none)', 'guard ev/s (vs none)', 'guard vs pipe', 'server CPU µs/event none / pipe / guard', 'p99 ms', 'non-2xx'], rows),
    '',
  ].join('\n');
}

main().then(
  () => process.exit(0),
  async (err) => {
    say(`FAILED: ${err.stack ?? err}`);
    await stopAll().catch(() => {});
    process.exit(1);
  },
);
