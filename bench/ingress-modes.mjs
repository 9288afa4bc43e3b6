/**
 * `node bench/ingress-modes.mjs` (needs `npm run build` once): ingress
 * throughput by auth mode, validation engine and header guard, with `--roles ingress` so
 * nothing else competes for the CPU.
 *
 *   baselines   autocannon ──► bare-server.mjs, once with the API-key requests,
 *               once with the signed-request generator (it signs every request,
 *               which costs the load generator CPU: each streamgate figure is
 *               compared with the baseline made by the same generator)
 *               autocannon ──► bare-kafka-server.mjs (the same, but each body is
 *               appended to Kafka before the 202): the durable floor
 *               autocannon ──► header guard ──► bare-kafka-server.mjs (when a
 *               guard-on variant runs): the durable floor with the guard
 *   per variant (ingress.validation = inline or pool, server.headerGuard on or off) a fresh
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
 * bench/ingress-modes.md.
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
import { bootstrapTenant, startStreamgate } from './lib/streamgate.mjs';
import { makeBody, makeRequests, runLoad } from './lib/load.mjs';
import { findPid, startCpuMeter } from './lib/cpu.mjs';
import { measuredLoad } from './lib/measured-load.mjs';
import { signedRequests } from './lib/signing.mjs';

const BARE_SERVER = fileURLToPath(new URL('./bare-server.mjs', import.meta.url));
const BARE_KAFKA_SERVER = fileURLToPath(new URL('./bare-kafka-server.mjs', import.meta.url));
const RESULTS = fileURLToPath(new URL('./ingress-modes.md', import.meta.url));
const CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
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
  // BENCH_GUARD=on,off: server.headerGuard (the relay in front of uWS; default on).
  const guards = list(process.env.BENCH_GUARD, ['on', 'off']);
  const variants = engines.flatMap((engine) => guards.map((guard) => ({ engine, guard, name: `${engine}-guard-${guard}` })));
  const auths = list(process.env.BENCH_AUTH, ['api-key', 'signed']);
  const profile = process.env.BENCH_PROFILE === '1';
  const runId = `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
  const workDir = await mkdtemp(join(tmpdir(), 'sg-bench-ingress-'));
  const brokers = (process.env.KAFKA_BROKERS ?? '127.0.0.1:9092').split(',');
  const topic = `sg-bench-${runId}`;
  say(`run ${runId}; engines ${engines.join(', ')}; guard ${guards.join(', ')}; auth ${auths.join(', ')}; logs in ${workDir}`);

  const db = await createBenchDatabase(runId);
  cleanups.push(() => dropBenchDatabase(db.name));
  const kafka = kafkaAdmin(brokers);
  cleanups.push(async () => {
    for (const problem of await kafka.cleanup(topic, [])) say(`cleanup: ${problem}`);
  });
  const configFile = (name) => join(workDir, `streamgate-${name}.yaml`);
  for (const { engine, guard, name } of [...variants, { engine: 'inline', guard: 'on', name: 'setup' }]) {
    // BENCH_SG_YAML: extra top-level YAML for the ingress nodes (e.g. kafka producer knobs), for A/B runs.
    const yaml = `redis:\n  keyPrefix: "sgbench-${runId}:"\ningress:\n  validation: ${engine}\nserver:\n  headerGuard: ${guard === 'on'}\n`;
    await writeFile(configFile(name), `${yaml}${process.env.BENCH_SG_YAML ?? ''}\n`);
  }
  const env = (engine) => ({
    ...process.env,
    DATABASE_URL: db.url,
    REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    KAFKA_BROKERS: brokers.join(','),
    LOG_LEVEL: 'warn',
    STREAMGATE_KAFKA_TOPIC: topic,
    STREAMGATE_KAFKA_GROUP: `sg-bench-${runId}`,
    STREAMGATE_CONFIG: configFile(engine),
  });
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

  // ---- baselines: the same request generators against bare uWS -----------------
  const baselines = {};
  const bare = forkChild('bare-server', BARE_SERVER);
  const { port: barePort } = await waitForMessage(bare, 'ready');
  for (const auth of auths) {
    say(`baseline, ${auth} requests`);
    baselines[auth] = await measuredLoad((seconds) => load(barePort, requestSets[auth], seconds), options, { server: bare.pid, autocannon: process.pid });
    say(`   ${Math.round(baselines[auth].acceptedPerS)} ev/s, p99 ${baselines[auth].p99} ms`);
  }
  await stopChild(bare);

  // ---- second baselines: bare uWS that appends each body to Kafka before answering ----
  // Behind the header guard too when a guard-on variant is measured: the floor
  // for those rows is a durable ingress that also pays the guard's relay.
  const durable = { none: {}, guard: {} };
  for (const relay of guards.includes('on') ? ['none', 'guard'] : ['none']) {
    const label = relay === 'none' ? 'baseline + Kafka' : 'baseline + Kafka + guard';
    const bareKafka = forkChild(`bare-kafka-server-${relay}`, BARE_KAFKA_SERVER, [relay], { env: { ...process.env, KAFKA_BROKERS: brokers.join(','), BENCH_TOPIC: topic } });
    const { port: bareKafkaPort } = await waitForMessage(bareKafka, 'ready');
    for (const auth of auths) {
      say(`${label}, ${auth} requests`);
      const result = await measuredLoad((seconds) => load(bareKafkaPort, requestSets[auth], seconds), options, { server: bareKafka.pid, autocannon: process.pid, kafka: kafkaPid });
      durable[relay][auth] = result;
      say(`   ${Math.round(result.acceptedPerS)} ev/s, p99 ${result.p99} ms`);
    }
    await stopChild(bareKafka);
  }

  // ---- streamgate, one fresh ingress-only node per variant -----------------------
  const rows = [];
  for (const { engine, guard, name } of variants) {
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
      say(`streamgate, validation ${engine}, guard ${guard}, ${auth}`);
      if (options.warmup) await load(port, requestSets[auth], options.warmup);
      const before = await kafka.countEvents(topic);
      const meter = startCpuMeter({ streamgate: sg.child.pid, autocannon: process.pid, kafka: kafkaPid });
      const result = await load(port, requestSets[auth], options.duration);
      result.cpu = meter();
      result.written = (await kafka.countEvents(topic)) - before;
      rows.push({ engine, guard, auth, result, baseline: baselines[auth], durable: durable.none[auth], guarded: durable.guard[auth] });
      say(`   ${Math.round(result.acceptedPerS)} ev/s (${pct(result.acceptedPerS / baselines[auth].acceptedPerS)} of baseline), p99 ${result.p99} ms, non-2xx ${result.non2xx}`);
    }
    const stopped = await stopChild(sg.child, 30_000);
    if (stopped.killed) say(`ingress-${name} did not stop within 30 s`);
    const problems = sg.logs.problems();
    if (problems.length) say(`ingress-${name} logged ${problems.map((p) => `${p.count}× ${p.key}`).join('; ')}`);
  }

  const text = report({ options, engines, auths, baselines, durable, rows, profile, workDir });
  process.stdout.write(`\n${text}`);
  await writeFile(RESULTS, text);
  say(`written ${RESULTS}`);
}

const pct = (x) => `${(x * 100).toFixed(1)} %`;
const int = (n) => (n === null || n === undefined ? '–' : Math.round(n).toLocaleString('en-US'));
const ms = (n) => (n === null || n === undefined ? '–' : n === 0 ? '<1' : String(n));
const perEvent = (load, who) => (load.cpu[who] == null || !load.acceptedPerS ? '–' : ((load.cpu[who] / 100) * 1e6 / load.acceptedPerS).toFixed(0));
const cpuText = (cpu) => Object.entries(cpu).map(([who, p]) => `${who} ${p ?? '?'} %`).join(', ');

function table(head, rows) {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
  const line = (cells) => `| ${cells.map((c, i) => String(c).padEnd(widths[i])).join(' | ')} |`;
  return [line(head), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map(line)].join('\n');
}

function report({ options: o, auths, baselines, durable, rows, profile, workDir }) {
  const out = [];
  out.push('# streamgate ingress by auth mode, validation engine and header guard');
  out.push('');
  out.push(`- date: ${new Date().toISOString()}`);
  out.push(`- node ${process.version}, ${process.platform}/${process.arch}, ${cpus().length} CPUs (${cpus()[0]?.model ?? '?'}); load average at the end ${loadavg().map((l) => l.toFixed(1)).join(' / ')} (1/5/15 min: other work on the machine skews every figure)`);
  out.push(`- ${o.duration} s per phase (+${o.warmup} s warm-up), ${o.connections} connections, pipelining ${o.pipelining}, body ${o.bodyBytes} B JSON, ${o.keys} partition keys`);
  out.push('- streamgate: `streamgate start --roles ingress` (no delivery, no management), one fresh node per variant, Kafka acks=all; guard = server.headerGuard (the relay thread in front of uWS)');
  out.push('- baseline: bare uWebSockets.js answering 202 at once, loaded by the same request generator (the signed generator signs every request)');
  out.push("- baseline + Kafka: bare uWebSockets.js that appends each body to Kafka (streamgate's writer, acks=all) before answering 202 (bench/bare-kafka-server.mjs): the least a durable ingress does; 'vs + Kafka' compares streamgate with it");
  out.push("- baseline + Kafka + guard: the same behind streamgate's header guard thread (uWS on a Unix socket, as streamgate with the guard on): the least a durable ingress with the guard does; 'vs + Kafka + guard' compares the guard-on rows with it");
  if (profile) out.push(`- profiled with --cpu-prof: profiles in ${workDir}`);
  out.push('');
  out.push(table(
    ['phase', 'accepted ev/s', 'vs baseline', 'vs + Kafka', 'vs + Kafka + guard', 'p50 ms', 'p99 ms', 'max ms', 'non-2xx', 'errors', '2xx in (s) / records written', 'server CPU µs/event', 'CPU'],
    [
      ...auths.map((auth) => ['baseline, ' + auth + ' requests', int(baselines[auth].acceptedPerS), '100 %', '–', '–', ms(baselines[auth].p50), ms(baselines[auth].p99), ms(baselines[auth].max), int(baselines[auth].non2xx), int(baselines[auth].errors), '–', perEvent(baselines[auth], 'server'), cpuText(baselines[auth].cpu)]),
      ...['none', 'guard'].flatMap((relay) =>
        auths.filter((auth) => durable[relay][auth]).map((auth) => {
          const d = durable[relay][auth];
          return [
            `baseline + Kafka${relay === 'guard' ? ' + guard' : ''}, ${auth} requests`,
            int(d.acceptedPerS),
            pct(d.acceptedPerS / baselines[auth].acceptedPerS),
            relay === 'none' ? '100 %' : pct(d.acceptedPerS / durable.none[auth].acceptedPerS),
            relay === 'guard' ? '100 %' : '–',
            ms(d.p50), ms(d.p99), ms(d.max), int(d.non2xx), int(d.errors), '–', perEvent(d, 'server'), cpuText(d.cpu),
          ];
        }),
      ),
      ...rows.map(({ engine, guard, auth, result, baseline, durable: floor, guarded }) => [
        `${auth}, validation ${engine}, guard ${guard}`,
        int(result.acceptedPerS),
        pct(result.acceptedPerS / baseline.acceptedPerS),
        pct(result.acceptedPerS / floor.acceptedPerS),
        guard === 'on' ? pct(result.acceptedPerS / guarded.acceptedPerS) : '–',
        ms(result.p50), ms(result.p99), ms(result.max), int(result.non2xx), int(result.errors), `${int(result.accepted)} in ${result.durationS.toFixed(1)} / ${int(result.written)}`, perEvent(result, 'streamgate'), cpuText(result.cpu),
      ]),
    ],
  ));
  out.push('');
  out.push('- accepted = 2xx answers; latency percentiles over 2xx only (autocannon, 1 ms resolution).');
  out.push('- 2xx in (s) / records written: the 2xx answers and the seconds autocannon measured them over (accepted ev/s = their quotient), then the growth of the Kafka topic during the phase: at least the 2xx count (requests in flight at the deadline are still acked), more only if the producer duplicated records.');
  out.push('- CPU = % of one core per process over the phase; on 2 cores, autocannon near 100 % means the load generator is the limit.');
  out.push('- server CPU µs/event = CPU time of the server process / accepted events: what one event costs, less sensitive than ev/s to other work on the machine.');
  return `${out.join('\n')}\n`;
}

main().then(
  () => cleanup().then(() => process.exit(0)),
  (err) => {
    say(`FAILED: ${err.stack ?? err}`);
    cleanup().finally(() => process.exit(1));
  },
);
