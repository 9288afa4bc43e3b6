/**
 * `node bench/ingress-modes.mjs` (needs `npm run build` once): ingress
 * throughput by auth mode and validation engine, with `--roles ingress` so
 * nothing else competes for the CPU.
 *
 *   baselines   autocannon ──► bare-server.mjs (node:http, and streamgate's own
 *               HttpServer with a trivial dispatch), once with the API-key
 *               requests, once with the signed-request generator (it signs every
 *               request, which costs the load generator CPU: each streamgate
 *               figure is compared with the baseline made by the same generator)
 *               autocannon ──► bare-kafka-server.mjs (the same on node:http and on
 *               our server, but each body is appended to Kafka before the 202):
 *               the durable floor
 *   per variant (ingress.validation = inline or pool) a fresh
 *               `streamgate start --roles ingress` node:
 *                 api-key  autocannon ──► POST /events/<ten>/bench-api
 *                 signed   autocannon ──► POST /events/<ten>/bench-signed
 *
 * Options as bench/run.mjs (lib/options.mjs: --duration, --connections,
 * --pipelining, --bodyBytes, --keys, --warmup, or BENCH_* env), plus
 * BENCH_ENGINES=inline,pool (default both), BENCH_AUTH=api-key,signed (default
 * both), BENCH_PROFILE=1 (node --cpu-prof on the ingress node; the
 * .cpuprofile files land in the run's work directory), BENCH_NODE_ARGS (extra
 * node flags for the ingress nodes, e.g. --trace-gc) and BENCH_SG_YAML (extra
 * top-level YAML for the ingress nodes, e.g. kafka producer knobs, for A/B runs). Results: console and
 * bench/results/ingress-modes.md.
 *
 * Every floor and every streamgate row runs dist/'s Kafka writer
 * (@platformatic/kafka). Its A/B against the home-made writer it replaced is
 * written up in docs/kafka-client.md (2026-11-24: this bench against an older
 * build from `git archive`, alternating builds); bench/kafka-writer.mjs
 * measures the writer alone. The A/B of this server against the uWS builds it
 * replaced is bench/server-ab.mjs.
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readOptions } from './lib/options.mjs';
import { forkChild, stopAll, stopChild, waitForMessage } from './lib/children.mjs';
import { freePort } from './lib/ports.mjs';
import { createBenchDatabase, dropBenchDatabase } from './lib/bench-db.mjs';
import { kafkaAdmin } from './lib/kafka-admin.mjs';
import { bootstrapTenant, clusterEnv, startStreamgate } from './lib/streamgate.mjs';
import { makeBody, makeRequests, runLoad } from './lib/load.mjs';
import { findPid, startCpuMeter, startThreadMeter } from './lib/cpu.mjs';
import { measuredLoad } from './lib/measured-load.mjs';
import { signedRequests } from './lib/signing.mjs';

const BARE_SERVER = fileURLToPath(new URL('./bare-server.mjs', import.meta.url));
const BARE_KAFKA_SERVER = fileURLToPath(new URL('./bare-kafka-server.mjs', import.meta.url));
const RESULTS = fileURLToPath(new URL('./results/ingress-modes.md', import.meta.url));
const CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
/** The bare servers (lib/bare-http.mjs kinds) and how the rows name them. */
const BARE_KINDS = ['node-http', 'own'];
const BARE_LABEL = { 'node-http': 'node:http', own: 'own HttpServer' };
const say = (msg) => process.stderr.write(`[bench] ${msg}\n`);
const list = (value, all) => (value ? value.split(',').map((s) => s.trim()).filter((s) => all.includes(s)) : all);

const cleanups = [];
let cleaning = null;
function cleanup() {
  cleaning ??= (async () => {
    await stopAll().catch(() => {});
    for (const step of cleanups.reverse()) {
      try {
        await step();
      } catch (err) {
        say(`cleanup: ${err.message}`);
      }
    }
  })();
  return cleaning;
}
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    say(`${signal}: cleaning up`);
    cleanup().finally(() => process.exit(130));
  });
}

async function main() {
  if (!existsSync(CLI)) throw new Error('dist/cli.js is missing: run `npm run build` first');
  const options = readOptions();
  const engines = list(process.env.BENCH_ENGINES, ['inline', 'pool']);
  const variants = engines.map((engine) => ({ engine, name: engine }));
  const auths = list(process.env.BENCH_AUTH, ['api-key', 'signed']);
  const profile = process.env.BENCH_PROFILE === '1';
  const runId = `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
  const workDir = await mkdtemp(join(tmpdir(), 'sg-bench-ingress-'));
  const brokers = (process.env.KAFKA_BROKERS ?? '127.0.0.1:9092').split(',');
  const topic = `sg-bench-${runId}`;
  say(`run ${runId}; engines ${engines.join(', ')}; auth ${auths.join(', ')}; logs in ${workDir}`);

  const db = await createBenchDatabase(runId);
  cleanups.push(() => dropBenchDatabase(db.name));
  const kafka = kafkaAdmin(brokers);
  cleanups.push(async () => {
    for (const problem of await kafka.cleanup(topic, [])) say(`cleanup: ${problem}`);
  });
  const configFile = (name) => join(workDir, `streamgate-${name}.yaml`);
  for (const { engine, name } of [...variants, { engine: 'inline', name: 'setup' }]) {
    // BENCH_SG_YAML: extra top-level YAML for the ingress nodes (e.g. kafka producer knobs), for A/B runs.
    const yaml = `redis:\n  keyPrefix: "sgbench-${runId}:"\ningress:\n  validation: ${engine}\n`;
    await writeFile(configFile(name), `${yaml}${process.env.BENCH_SG_YAML ?? ''}\n`);
  }
  const env = (name) => clusterEnv({ databaseUrl: db.url, brokers, topic, group: `sg-bench-${runId}`, configFile: configFile(name) });
  const creds = await bootstrapTenant(env('setup'));

  // ---- configuration, through the API of a management-only node ---------------
  const mgmt = await startStreamgate({ name: 'management', env: env('setup'), port: await freePort(), roles: ['management'], logFile: join(workDir, 'management.log') });
  const manage = async (method, path, body) => {
    const res = await fetch(`${mgmt.base}/v1/tenants/${creds.tenantPublicId}${path}`, {
      method,
      headers: { 'x-api-key': creds.buildKey, 'x-license-publicid': creds.licensePublicId, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = await res.json();
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  };
  await manage('PUT', '/queues/bench-api', {});
  await manage('PUT', '/queues/bench-signed', { authMode: 'signed_request' });
  const key = await manage('POST', '/signing-keys', {});
  await stopChild(mgmt.child);

  const body = makeBody(options.bodyBytes);
  const base = (queue, headers) => makeRequests({ path: `/events/${creds.tenantPublicId}/${queue}`, headers: { 'content-type': 'application/json', ...headers }, body, keys: options.keys });
  const requestSets = {
    'api-key': base('bench-api', { 'x-api-key': creds.ingressKey }),
    signed: signedRequests({ requests: base('bench-signed', {}), key: { keyId: key.keyId, secret: key.secret } }),
  };
  const load = (port, requests, duration) =>
    runLoad({ url: `http://127.0.0.1:${port}`, requests, duration, connections: options.connections, pipelining: options.pipelining });
  const kafkaPid = findPid('kafka.Kafka');

  // ---- baselines: the same request generators against the bare servers -----------
  const baselines = { 'node-http': {}, own: {} };
  for (const kind of BARE_KINDS) {
    const bare = forkChild(`bare-server-${kind}`, BARE_SERVER, [kind]);
    const { port: barePort } = await waitForMessage(bare, 'ready');
    for (const auth of auths) {
      say(`baseline (${BARE_LABEL[kind]}), ${auth} requests`);
      baselines[kind][auth] = await measuredLoad((seconds) => load(barePort, requestSets[auth], seconds), options, { server: bare.pid, autocannon: process.pid });
      say(`   ${Math.round(baselines[kind][auth].acceptedPerS)} ev/s, p99 ${baselines[kind][auth].p99} ms`);
    }
    await stopChild(bare);
  }

  // ---- second baselines: the bare servers appending each body to Kafka before answering ----
  const durable = { 'node-http': {}, own: {} };
  for (const kind of BARE_KINDS) {
    const bareKafka = forkChild(`bare-kafka-server-${kind}`, BARE_KAFKA_SERVER, [kind], { env: { ...process.env, KAFKA_BROKERS: brokers.join(','), BENCH_TOPIC: topic } });
    const { port: bareKafkaPort } = await waitForMessage(bareKafka, 'ready');
    for (const auth of auths) {
      say(`baseline + Kafka (${BARE_LABEL[kind]}), ${auth} requests`);
      const result = await measuredLoad((seconds) => load(bareKafkaPort, requestSets[auth], seconds), options, { server: bareKafka.pid, autocannon: process.pid, kafka: kafkaPid });
      durable[kind][auth] = result;
      say(`   ${Math.round(result.acceptedPerS)} ev/s, p99 ${result.p99} ms`);
    }
    await stopChild(bareKafka);
  }

  // ---- streamgate, one fresh ingress-only node per variant -----------------------
  const rows = [];
  for (const { engine, name } of variants) {
    const sg = await startStreamgate({
      name: `ingress-${name}`,
      env: env(name),
      port: await freePort(),
      roles: ['ingress'],
      logFile: join(workDir, `ingress-${name}.log`),
      nodeArgs: [...(profile ? ['--cpu-prof', `--cpu-prof-dir=${workDir}`] : []), ...(process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean)],
    });
    const port = new URL(sg.base).port;
    for (const auth of auths) {
      say(`streamgate, validation ${engine}, ${auth}`);
      if (options.warmup) await load(port, requestSets[auth], options.warmup);
      const before = await kafka.countEvents(topic);
      const meter = startCpuMeter({ streamgate: sg.child.pid, autocannon: process.pid, kafka: kafkaPid });
      const threads = startThreadMeter(sg.child.pid);
      const result = await load(port, requestSets[auth], options.duration);
      result.cpu = meter();
      result.threads = threads();
      result.written = (await kafka.countEvents(topic)) - before;
      rows.push({ engine, auth, result, baseline: baselines['node-http'][auth], durable: durable['node-http'][auth] });
      say(`   ${Math.round(result.acceptedPerS)} ev/s (${pct(result.acceptedPerS / baselines['node-http'][auth].acceptedPerS)} of the node:http baseline), p99 ${result.p99} ms, non-2xx ${result.non2xx}`);
      say(`   threads (µs per event): ${threadText(result)}`);
    }
    const stopped = await stopChild(sg.child, 30_000);
    if (stopped.killed) say(`ingress-${name} did not stop within 30 s`);
    const problems = sg.logs.problems();
    if (problems.length) say(`ingress-${name} logged ${problems.map((p) => `${p.count}× ${p.key}`).join('; ')}`);
  }

  const text = report({ options, auths, baselines, durable, rows, profile, workDir });
  process.stdout.write(`\n${text}`);
  await writeFile(RESULTS, text);
  say(`written ${RESULTS}`);
}

/** Each thread group's CPU in µs per accepted event, biggest first. */
const threadText = (load) =>
  Object.entries(load.threads ?? {})
    .filter(([, p]) => p > 0)
    .sort((a, b) => b[1] - a[1])
    .map(([who, p]) => `${who} ${load.acceptedPerS ? (((p / 100) * 1e6) / load.acceptedPerS).toFixed(1) : '?'}`)
    .join(', ');
const pct = (x) => (x === null || x === undefined || !Number.isFinite(x) ? '–' : `${(x * 100).toFixed(1)} %`);
const int = (n) => (n === null || n === undefined ? '–' : Math.round(n).toLocaleString('en-US'));
const ms = (n) => (n === null || n === undefined ? '–' : n === 0 ? '<1' : String(n));
/** CPU µs of `who` per accepted event, as a number (null when unknown). */
const usPerEvent = (load, who) => (load?.cpu?.[who] == null || !load.acceptedPerS ? null : ((load.cpu[who] / 100) * 1e6) / load.acceptedPerS);
const perEvent = (load, who) => (usPerEvent(load, who) === null ? '–' : usPerEvent(load, who).toFixed(0));
const cpuText = (cpu) => Object.entries(cpu).map(([who, p]) => `${who} ${p ?? '?'} %`).join(', ');

function table(head, rows) {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
  const line = (cells) => `| ${cells.map((c, i) => String(c).padEnd(widths[i])).join(' | ')} |`;
  return [line(head), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map(line)].join('\n');
}

function report({ options: o, auths, baselines, durable, rows, profile, workDir }) {
  const out = [];
  out.push('# streamgate ingress by auth mode and validation engine');
  out.push('');
  out.push(`- date: ${new Date().toISOString()}`);
  out.push(`- node ${process.version}, ${process.platform}/${process.arch}, ${cpus().length} CPUs (${cpus()[0]?.model ?? '?'}); load average at the end ${loadavg().map((l) => l.toFixed(1)).join(' / ')} (1/5/15 min: other work on the machine skews every figure)`);
  out.push(`- ${o.duration} s per phase (+${o.warmup} s warm-up), ${o.connections} connections, pipelining ${o.pipelining}, body ${o.bodyBytes} B JSON, ${o.keys} partition keys`);
  out.push('- streamgate: `streamgate start --roles ingress` (no delivery, no management), one fresh node per variant, Kafka acks=all, its own HTTP server (src/http/server.ts)');
  out.push("- baseline: a bare server answering 202 at once, loaded by the same request generator (the signed generator signs every request): node:http (the floor a Node HTTP server reaches; 'vs baseline' compares with it) and streamgate's own HttpServer with a trivial dispatch (dist/http/server.js: our parser at the floor)");
  out.push("- baseline + Kafka: the same bare servers appending each body to Kafka (streamgate's writer, acks=all) before answering 202 (bench/bare-kafka-server.mjs): the least a durable ingress does; 'vs + Kafka' compares streamgate with the node:http one");
  if (profile) out.push(`- profiled with --cpu-prof: profiles in ${workDir}`);
  out.push('');
  const floor = (what, r, base, kafka) => [what, int(r.acceptedPerS), pct(r.acceptedPerS / base.acceptedPerS), kafka ? pct(r.acceptedPerS / kafka.acceptedPerS) : '–', ms(r.p50), ms(r.p99), ms(r.max), int(r.non2xx), int(r.errors), '–', perEvent(r, 'server'), cpuText(r.cpu)];
  out.push(table(
    ['phase', 'accepted ev/s', 'vs baseline', 'vs + Kafka', 'p50 ms', 'p99 ms', 'max ms', 'non-2xx', 'errors', '2xx in (s) / records written', 'server CPU µs/event', 'CPU'],
    [
      ...BARE_KINDS.flatMap((kind) => auths.map((auth) => floor(`baseline (${BARE_LABEL[kind]}), ${auth} requests`, baselines[kind][auth], baselines['node-http'][auth]))),
      ...BARE_KINDS.flatMap((kind) => auths.map((auth) => floor(`baseline + Kafka (${BARE_LABEL[kind]}), ${auth} requests`, durable[kind][auth], baselines['node-http'][auth], durable['node-http'][auth]))),
      ...rows.map(({ engine, auth, result, baseline, durable: kafkaFloor }) => [
        `${auth}, validation ${engine}`,
        int(result.acceptedPerS),
        pct(result.acceptedPerS / baseline.acceptedPerS),
        pct(result.acceptedPerS / kafkaFloor.acceptedPerS),
        ms(result.p50), ms(result.p99), ms(result.max), int(result.non2xx), int(result.errors), `${int(result.accepted)} in ${result.durationS.toFixed(1)} / ${int(result.written)}`, perEvent(result, 'streamgate'), cpuText(result.cpu),
      ]),
    ],
  ));
  out.push('');
  out.push('- accepted = 2xx answers; latency percentiles over 2xx only (autocannon, 1 ms resolution).');
  out.push('- 2xx in (s) / records written: the 2xx answers and the seconds autocannon measured them over (accepted ev/s = their quotient), then the growth of the Kafka topic during the phase: at least the 2xx count (requests in flight at the deadline are still acked), more only if the producer duplicated records.');
  out.push('- CPU = % of one core per process over the phase; on 2 cores, autocannon near 100 % means the load generator is the limit.');
  out.push('- server CPU µs/event = CPU time of the server process / accepted events: what one event costs, less sensitive than ev/s to other work on the machine.');
  out.push('');
  out.push('## Threads of the streamgate node (µs per event)');
  out.push('');
  for (const { engine, auth, result } of rows) out.push(`- ${auth}, validation ${engine}: ${threadText(result)}`);
  out.push('');
  return `${out.join('\n')}\n`;
}

main().then(
  () => cleanup().then(() => process.exit(0)),
  (err) => {
    say(`FAILED: ${err.stack ?? err}`);
    cleanup().finally(() => process.exit(1));
  },
);
