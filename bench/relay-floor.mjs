/**
 * `node bench/relay-floor.mjs` (needs `npm run build` once): what the header
 * guard's relay costs, apart from everything else streamgate does.
 *
 *   none    autocannon ──► bare-server.mjs on TCP
 *   pipe    autocannon ──► minimal relay thread ──unix──► bare-server.mjs
 *   guard   autocannon ──► streamgate's guard thread (dist/) ──unix──► bare-server.mjs
 *   legacy  autocannon ──► the guard as of 2bf0853 (lib/legacy-guard/) ──unix──► bare-server.mjs
 *
 * The relays alternate for --rounds rounds (default 3), so that machine noise
 * hits them alike; each round's figures are ratios to that round's `none`.
 * `pipe / none` is the price of any relay in Node on this box; `guard / pipe`
 * is what the guard's own work (head scan, framing) adds to it; `guard /
 * legacy` is the new front against the old guard. Options as bench/run.mjs
 * (duration, connections, bodyBytes, keys, warmup), plus BENCH_ROUNDS and
 * BENCH_RELAYS (default none,pipe,guard,legacy; `none` always runs, as the
 * reference). Results: console and bench/relay-floor.md.
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
const ALL_RELAYS = ['none', 'pipe', 'guard', 'legacy'];
const LABEL = { none: 'none', pipe: 'pipe', guard: 'guard (new front)', legacy: 'legacy (old guard)' };

async function main() {
  const asked = (process.env.BENCH_RELAYS ?? '').split(',').map((r) => r.trim()).filter(Boolean);
  const unknown = asked.filter((r) => !ALL_RELAYS.includes(r));
  if (unknown.length) throw new Error(`BENCH_RELAYS: unknown ${unknown.join(', ')} (one of ${ALL_RELAYS.join(', ')})`);
  const relays = asked.length ? ALL_RELAYS.filter((r) => r === 'none' || asked.includes(r)) : ALL_RELAYS;
  if (relays.includes('guard') && !existsSync(GUARD_WORKER)) throw new Error('dist/ is missing: run `npm run build` first');
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
    for (const relay of relays) {
      const server = forkChild(`bare-${relay}`, BARE_SERVER, [relay]);
      const { port } = await waitForMessage(server, 'ready');
      const result = await measuredLoad((seconds) => load(port, seconds), options, { server: server.pid, autocannon: process.pid });
      await stopChild(server);
      row[relay] = result;
      say(`round ${round}, ${relay}: ${int(result.acceptedPerS)} ev/s, server ${perEvent(result)} µs/event, non-2xx ${result.non2xx}`);
    }
    results.push(row);
  }
  const text = report(options, relays, results);
  process.stdout.write(`\n${text}`);
  await writeFile(RESULTS, text);
  say(`written ${RESULTS}`);
}

const perEventN = (r) => ((r.cpu.server / 100) * 1e6) / r.acceptedPerS;
const perEvent = (r) => (r.cpu.server == null ? '–' : perEventN(r).toFixed(1));

function report(o, relays, results) {
  const others = relays.filter((r) => r !== 'none');
  const vs = (row, a, b) => (row[a] && row[b] ? pct(row[a].acceptedPerS / row[b].acceptedPerS) : '–');
  const cpuVs = (row, a, b) => (row[a] && row[b] && row[a].cpu.server != null && row[b].cpu.server != null ? pct(perEventN(row[a]) / perEventN(row[b])) : '–');
  const pairs = [
    ['guard', 'pipe'],
    ['legacy', 'pipe'],
    ['guard', 'legacy'],
  ].filter(([a, b]) => relays.includes(a) && relays.includes(b));
  const rows = results.map((row) => [
    row.round,
    int(row.none.acceptedPerS),
    ...others.map((r) => `${int(row[r].acceptedPerS)} (${pct(row[r].acceptedPerS / row.none.acceptedPerS)})`),
    ...pairs.map(([a, b]) => vs(row, a, b)),
    relays.map((r) => perEvent(row[r])).join(' / '),
    ...(relays.includes('guard') && relays.includes('legacy') ? [cpuVs(row, 'guard', 'legacy')] : []),
    relays.map((r) => row[r].p99).join(' / '),
    relays.map((r) => row[r].non2xx).reduce((a, b) => a + b, 0),
  ]);
  const head = [
    'round',
    'none ev/s',
    ...others.map((r) => `${LABEL[r]} ev/s (vs none)`),
    ...pairs.map(([a, b]) => `${a} vs ${b}`),
    `server CPU µs/event ${relays.join(' / ')}`,
    ...(relays.includes('guard') && relays.includes('legacy') ? ['CPU/event guard vs legacy'] : []),
    `p99 ms ${relays.join(' / ')}`,
    'non-2xx',
  ];
  return [
    "# the header guard's relay against bare uWS and a minimal relay",
    '',
    `- date: ${new Date().toISOString()}`,
    `- node ${process.version}, ${cpus().length} CPUs (${cpus()[0]?.model ?? '?'}); load average at the end ${loadavg().map((l) => l.toFixed(1)).join(' / ')}`,
    `- ${o.duration} s per phase (+${o.warmup} s warm-up), ${o.connections} connections, body ${o.bodyBytes} B JSON; the servers (${relays.join(', ')}) alternate within each round`,
    "- none: bare uWS on TCP; pipe: bare uWS behind a relay thread that only pipes (PROXY header, then both directions); guard: bare uWS behind streamgate's header guard thread (dist/, the new front); legacy: the same behind the header guard as of 2bf0853 (bench/lib/legacy-guard/, the old guard)",
    '',
    table(head, rows),
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
