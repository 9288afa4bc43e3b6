/**
 * `node bench/front-vs-llhttp.mjs [rounds]` (needs `npm run build`): the front's
 * own strict parser (`guard`, dist/) against the same job done with Node's HTTP
 * stack, llhttp parsing and node:http re-serializing to uWS (`llhttp`,
 * lib/listen-bare.mjs), and against the old guard (`legacy`). Each relay sits
 * in front of the bare uWS server (bare-server.mjs) in a child process;
 * autocannon (50 connections, 1 KB JSON, 6 s) loads it; rounds alternate the
 * relays so machine noise hits them alike. Reports requests/s and the child's
 * CPU µs per request (uWS thread and relay thread together).
 */
import { fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';

const BARE = fileURLToPath(new URL('./bare-server.mjs', import.meta.url));
const rounds = Number(process.argv[2] ?? 3);
const relays = ['guard', 'llhttp', 'legacy'];
const body = JSON.stringify({ a: 'x'.repeat(1000) });

async function measure(relay) {
  const child = fork(BARE, [relay], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  const port = await new Promise((resolve) => child.once('message', (m) => resolve(typeof m === 'object' ? m.port : m)));
  const run = (duration) =>
    autocannon({ url: `http://127.0.0.1:${port}/events/t/q`, method: 'POST', body, connections: 50, duration, headers: { 'content-type': 'application/json', 'x-api-key': 'qak_key_aaaaaaaaaaaaaa.bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb' } });
  await run(1);
  const before = cpuOf(child.pid);
  const result = await run(6);
  const cpuUs = (cpuOf(child.pid) - before) * 10_000;
  child.kill();
  const n = result.requests.total;
  return { relay, rps: Math.round(n / 6), usPerReq: cpuUs / n, non2xx: result.non2xx };
}

/** utime + stime of a process, in clock ticks (10 ms). */
function cpuOf(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

const rows = [];
for (let r = 1; r <= rounds; r++) {
  const order = r % 2 ? relays : [...relays].reverse();
  for (const relay of order) {
    const m = await measure(relay);
    rows.push({ round: r, ...m });
    process.stderr.write(`[bench] round ${r}, ${relay}: ${m.rps} req/s, ${m.usPerReq.toFixed(1)} µs CPU/req, non-2xx ${m.non2xx}\n`);
  }
}
for (let r = 1; r <= rounds; r++) {
  const of = (relay) => rows.find((x) => x.round === r && x.relay === relay);
  const g = of('guard');
  const l = of('llhttp');
  const o = of('legacy');
  console.log(`round ${r}: front ${g.usPerReq.toFixed(1)} µs, llhttp ${l.usPerReq.toFixed(1)} µs (front ${((100 * g.usPerReq) / l.usPerReq).toFixed(0)} % of it), old guard ${o.usPerReq.toFixed(1)} µs; req/s front ${g.rps}, llhttp ${l.rps} (${((100 * g.rps) / l.rps).toFixed(0)} %), old guard ${o.rps}`);
}
