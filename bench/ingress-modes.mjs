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
 *               guard-on variant runs): the durable floor with the guard; the
 *               same behind the old guard when a guard-legacy variant runs
 *   per variant (ingress.validation = inline or pool; guard on, legacy or off) a fresh
 *               `streamgate start --roles ingress` node:
 *                 api-key  autocannon ──► POST /events/<ten>/bench-api
 *                 signed   autocannon ──► POST /events/<ten>/bench-signed
 *
 * Guard variants (BENCH_GUARD=on,legacy,off, default all three):
 *   on      server.headerGuard true: the guard thread in dist/ (the new front)
 *   legacy  server.headerGuard true with STREAMGATE_GUARD_WORKER pointing at
 *           lib/legacy-guard/header-guard-worker.js: the header guard as of
 *           2bf0853 (the old guard), in the same node otherwise; for the A/B
 *           of the new front against it, then to be removed with that folder
 *   off     server.headerGuard false: uWS owns the port
 * The report compares the `on` and `legacy` rows of each engine and auth mode
 * (events/s, p99, streamgate CPU µs per event).
 *
 * Options as bench/run.mjs (lib/options.mjs: --duration, --connections,
 * --pipelining, --bodyBytes, --keys, --warmup, or BENCH_* env), plus
 * BENCH_ENGINES=inline,pool (default both), BENCH_AUTH=api-key,signed (default
 * both), BENCH_PROFILE=1 (node --cpu-prof on the ingress node; the
 * .cpuprofile files land in the run's work directory), BENCH_NODE_ARGS (extra
 * node flags for the ingress nodes, e.g. --trace-gc) and BENCH_SG_YAML (extra
 * top-level YAML for the ingress nodes, e.g. kafka producer knobs, for A/B runs). Results: console and
 * bench/ingress-modes.md.
 *
 * Every floor and every streamgate row runs dist/'s Kafka writer
 * (@platformatic/kafka). Its A/B against the home-made writer it replaced is
 * written up in docs/kafka-client.md (2026-11-24: this bench against an older
 * build from `git archive`, alternating builds); bench/kafka-writer.mjs
 * measures the writer alone.
 */
import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import { existsSync, readFileSync } from 'node:fs';
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
const RESULTS = fileURLToPath(new URL('./ingress-modes.md', import.meta.url));
const CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
const DIST_LISTEN = fileURLToPath(new URL('../dist/http/listen.js', import.meta.url));
// The header guard as of 2bf0853, started by the node in place of its own (`legacy`).
const LEGACY_GUARD_WORKER = fileURLToPath(new URL('./lib/legacy-guard/header-guard-worker.js', import.meta.url));
/** How the rows name each guard variant. */
const GUARD_LABEL = { on: 'guard on (new front)', legacy: 'guard legacy (old guard)', off: 'guard off' };
/** The bare-kafka-server relay that is the floor of each guard variant's rows. */
const FLOOR_RELAY = { on: 'guard', legacy: 'legacy', off: 'none' };
// The old guard refuses an HTTP/2.0 request line with this text (its request-line regex allows only HTTP/1.x).
const OLD_GUARD_REFUSAL = 'The request line is not `METHOD target HTTP/1.x`';
const FLOOR_LABEL = { none: 'baseline + Kafka', guard: 'baseline + Kafka + guard (new front)', legacy: 'baseline + Kafka + old guard' };
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
  // BENCH_GUARD=on,legacy,off: server.headerGuard (the relay in front of uWS) with
  // the guard in dist/ (on), with the old one (legacy), or off; default all three.
  const guards = list(process.env.BENCH_GUARD, ['on', 'legacy', 'off']);
  if (!guards.length) throw new Error(`BENCH_GUARD=${process.env.BENCH_GUARD}: none of on, legacy, off`);
  if (guards.includes('legacy')) {
    // A dist/ built without the override would silently run its own guard in the legacy rows.
    if (!readFileSync(DIST_LISTEN, 'utf8').includes('STREAMGATE_GUARD_WORKER')) {
      throw new Error('dist/http/listen.js does not honour STREAMGATE_GUARD_WORKER: rebuild (`npm run build`) from a tree that has it');
    }
    if (!existsSync(LEGACY_GUARD_WORKER)) throw new Error(`${LEGACY_GUARD_WORKER} is missing`);
  }
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
    const yaml = `redis:\n  keyPrefix: "sgbench-${runId}:"\ningress:\n  validation: ${engine}\nserver:\n  headerGuard: ${guard !== 'off'}\n`;
    await writeFile(configFile(name), `${yaml}${process.env.BENCH_SG_YAML ?? ''}\n`);
  }
  const { STREAMGATE_GUARD_WORKER: _inherited, ...inherited } = process.env;
  const env = (name, guard) =>
    clusterEnv({
      databaseUrl: db.url,
      brokers,
      topic,
      group: `sg-bench-${runId}`,
      configFile: configFile(name),
      base: inherited,
      // `legacy`: the node starts the old guard's worker instead of its own (never inherited).
      extra: guard === 'legacy' ? { STREAMGATE_GUARD_WORKER: LEGACY_GUARD_WORKER } : {},
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
  // Behind the header guard too when a guard-on variant is measured (and behind
  // the old guard for guard-legacy): the floor for those rows is a durable
  // ingress that also pays that guard's relay.
  const durable = { none: {}, guard: {}, legacy: {} };
  const floors = ['none', ...(guards.includes('on') ? ['guard'] : []), ...(guards.includes('legacy') ? ['legacy'] : [])];
  for (const relay of floors) {
    const label = FLOOR_LABEL[relay];
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
      env: env(name, guard),
      port: await freePort(),
      roles: ['ingress'],
      logFile: join(workDir, `ingress-${name}.log`),
      nodeArgs: [...(profile ? ['--cpu-prof', `--cpu-prof-dir=${workDir}`] : []), ...(process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean)],
    });
    const port = new URL(sg.base).port;
    if (guard !== 'off') {
      // Which guard is in front: the old one answers this head with its own refusal.
      const answer = await probeGuard(port);
      const old = answer.includes(OLD_GUARD_REFUSAL);
      say(`ingress-${name}: "GET /readyz HTTP/2.0" answered ${JSON.stringify(answer.split('\r\n', 1)[0] || '(nothing)')}${old ? ' (the old guard)' : ''}`);
      if (guard === 'legacy' && !old) throw new Error(`ingress-${name} is not running the old guard (STREAMGATE_GUARD_WORKER ignored?)`);
      if (guard === 'on' && old) say(`ingress-${name}: guard on answers like the old guard: is dist/ built from the new front?`);
    }
    for (const auth of auths) {
      say(`streamgate, validation ${engine}, ${GUARD_LABEL[guard]}, ${auth}`);
      if (options.warmup) await load(port, requestSets[auth], options.warmup);
      const before = await kafka.countEvents(topic);
      const meter = startCpuMeter({ streamgate: sg.child.pid, autocannon: process.pid, kafka: kafkaPid });
      const threads = startThreadMeter(sg.child.pid);
      const result = await load(port, requestSets[auth], options.duration);
      result.cpu = meter();
      result.threads = threads();
      result.written = (await kafka.countEvents(topic)) - before;
      rows.push({ engine, guard, auth, result, baseline: baselines[auth], durable: durable.none[auth], guarded: guard === 'off' ? undefined : durable[FLOOR_RELAY[guard]][auth] });
      say(`   ${Math.round(result.acceptedPerS)} ev/s (${pct(result.acceptedPerS / baselines[auth].acceptedPerS)} of baseline), p99 ${result.p99} ms, non-2xx ${result.non2xx}`);
      say(`   threads (µs per event): ${threadText(result)}`);
    }
    const stopped = await stopChild(sg.child, 30_000);
    if (stopped.killed) say(`ingress-${name} did not stop within 30 s`);
    const problems = sg.logs.problems();
    if (problems.length) say(`ingress-${name} logged ${problems.map((p) => `${p.count}× ${p.key}`).join('; ')}`);
  }

  const text = report({ options, engines, auths, baselines, durable, floors, rows, profile, workDir });
  process.stdout.write(`\n${text}`);
  await writeFile(RESULTS, text);
  say(`written ${RESULTS}`);
}

/** Sends one HTTP/2.0-versioned head and returns whatever comes back within 2 s. */
function probeGuard(port) {
  return new Promise((resolve) => {
    const chunks = [];
    const socket = connect(Number(port), '127.0.0.1', () => socket.write('GET /readyz HTTP/2.0\r\nhost: 127.0.0.1\r\n\r\n'));
    const done = () => {
      socket.destroy();
      resolve(Buffer.concat(chunks).toString('latin1'));
    };
    const timer = setTimeout(done, 2_000);
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', () => {});
    socket.on('close', () => {
      clearTimeout(timer);
      done();
    });
  });
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
const signed = (n) => (n === null || !Number.isFinite(n) ? '–' : `${n >= 0 ? '+' : ''}${n.toFixed(0)}`);

function table(head, rows) {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
  const line = (cells) => `| ${cells.map((c, i) => String(c).padEnd(widths[i])).join(' | ')} |`;
  return [line(head), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map(line)].join('\n');
}

/**
 * The new front (guard on) against the old guard (legacy), per engine and auth
 * mode, from the same run: events/s, p99 and streamgate CPU µs per event, with
 * guard off beside them; "guard's own CPU" is each guard's µs/event over guard
 * off's. The floors (bare uWS + Kafka behind each guard) come first.
 */
function frontVsGuard({ auths, durable, rows }) {
  const find = (engine, guard, auth) => rows.find((r) => r.engine === engine && r.guard === guard && r.auth === auth)?.result;
  const pairs = [];
  for (const auth of auths) {
    if (durable.guard[auth] && durable.legacy[auth]) pairs.push({ what: `bare uWS + Kafka behind the guard, ${auth}`, neu: durable.guard[auth], old: durable.legacy[auth], off: durable.none[auth], who: 'server' });
  }
  for (const engine of [...new Set(rows.map((r) => r.engine))]) {
    for (const auth of auths) {
      const neu = find(engine, 'on', auth);
      const old = find(engine, 'legacy', auth);
      if (neu && old) pairs.push({ what: `streamgate, ${auth}, validation ${engine}`, neu, old, off: find(engine, 'off', auth), who: 'streamgate' });
    }
  }
  if (!pairs.length) return [];
  const body = pairs.map(({ what, neu, old, off, who }) => {
    const [n, o, f] = [usPerEvent(neu, who), usPerEvent(old, who), usPerEvent(off, who)];
    return [
      what,
      `${int(neu.acceptedPerS)} / ${int(old.acceptedPerS)} / ${int(off?.acceptedPerS)}`,
      pct(neu.acceptedPerS / old.acceptedPerS),
      `${ms(neu.p99)} / ${ms(old.p99)} / ${ms(off?.p99)}`,
      `${perEvent(neu, who)} / ${perEvent(old, who)} / ${perEvent(off, who)}`,
      n === null || o === null ? '–' : pct(n / o),
      f === null || n === null || o === null ? '–' : `${signed(n - f)} / ${signed(o - f)}`,
    ];
  });
  return [
    '## new front vs old guard',
    '',
    table(['pair (same run)', 'ev/s new / old / off', 'ev/s new vs old', 'p99 ms new / old / off', 'server CPU µs/event new / old / off', 'CPU/event new vs old', "guard's own CPU µs/event new / old (over off)"], body),
    '',
    '- new = guard on (the new front, dist/); old = guard legacy (the header guard as of 2bf0853, bench/lib/legacy-guard/, through STREAMGATE_GUARD_WORKER); off = guard off (uWS owns the port).',
    "- ev/s new vs old above 100 % and CPU/event new vs old under 100 % favour the new front. The guard thread runs in the streamgate process, so its CPU is in the server's µs/event; the guard's own CPU is that minus guard off's (for the bare rows: minus bare uWS + Kafka without a guard).",
    '',
    ...pairs.map(({ what, neu, old, who }) => `- new front vs old guard, ${what}: ${pct(neu.acceptedPerS / old.acceptedPerS)} events/s; CPU ${perEvent(neu, who)} vs ${perEvent(old, who)} µs/event (${pct(usPerEvent(neu, who) / usPerEvent(old, who))})`),
    '',
  ];
}

function report({ options: o, auths, baselines, durable, floors, rows, profile, workDir }) {
  const out = [];
  out.push('# streamgate ingress by auth mode, validation engine and header guard');
  out.push('');
  out.push(`- date: ${new Date().toISOString()}`);
  out.push(`- node ${process.version}, ${process.platform}/${process.arch}, ${cpus().length} CPUs (${cpus()[0]?.model ?? '?'}); load average at the end ${loadavg().map((l) => l.toFixed(1)).join(' / ')} (1/5/15 min: other work on the machine skews every figure)`);
  out.push(`- ${o.duration} s per phase (+${o.warmup} s warm-up), ${o.connections} connections, pipelining ${o.pipelining}, body ${o.bodyBytes} B JSON, ${o.keys} partition keys`);
  out.push('- streamgate: `streamgate start --roles ingress` (no delivery, no management), one fresh node per variant, Kafka acks=all; guard = server.headerGuard (the relay thread in front of uWS): "guard on (new front)" runs the guard in dist/, "guard legacy (old guard)" the header guard as of 2bf0853 (bench/lib/legacy-guard/, started by the same node through STREAMGATE_GUARD_WORKER), "guard off" none');
  out.push('- baseline: bare uWebSockets.js answering 202 at once, loaded by the same request generator (the signed generator signs every request)');
  out.push("- baseline + Kafka: bare uWebSockets.js that appends each body to Kafka (streamgate's writer, acks=all) before answering 202 (bench/bare-kafka-server.mjs): the least a durable ingress does; 'vs + Kafka' compares streamgate with it");
  out.push("- baseline + Kafka + guard (new front) / + old guard: the same behind that header guard thread (uWS on a Unix socket, as streamgate with the guard on): the least a durable ingress with that guard does; 'vs + Kafka + its guard' compares the guard-on rows with the first and the guard-legacy rows with the second");
  out.push("- 'vs old guard': a guard-on row's events/s against the guard-legacy row of the same engine and auth mode");
  if (profile) out.push(`- profiled with --cpu-prof: profiles in ${workDir}`);
  out.push('');
  const legacyOf = (engine, auth) => rows.find((r) => r.engine === engine && r.guard === 'legacy' && r.auth === auth)?.result;
  out.push(table(
    ['phase', 'accepted ev/s', 'vs baseline', 'vs + Kafka', 'vs + Kafka + its guard', 'vs old guard', 'p50 ms', 'p99 ms', 'max ms', 'non-2xx', 'errors', '2xx in (s) / records written', 'server CPU µs/event', 'CPU'],
    [
      ...auths.map((auth) => ['baseline, ' + auth + ' requests', int(baselines[auth].acceptedPerS), '100 %', '–', '–', '–', ms(baselines[auth].p50), ms(baselines[auth].p99), ms(baselines[auth].max), int(baselines[auth].non2xx), int(baselines[auth].errors), '–', perEvent(baselines[auth], 'server'), cpuText(baselines[auth].cpu)]),
      ...floors.flatMap((relay) =>
        auths.filter((auth) => durable[relay][auth]).map((auth) => {
          const d = durable[relay][auth];
          return [
            `${FLOOR_LABEL[relay]}, ${auth} requests`,
            int(d.acceptedPerS),
            pct(d.acceptedPerS / baselines[auth].acceptedPerS),
            relay === 'none' ? '100 %' : pct(d.acceptedPerS / durable.none[auth].acceptedPerS),
            relay === 'none' ? '–' : '100 %',
            relay === 'guard' && durable.legacy[auth] ? pct(d.acceptedPerS / durable.legacy[auth].acceptedPerS) : relay === 'legacy' ? '100 %' : '–',
            ms(d.p50), ms(d.p99), ms(d.max), int(d.non2xx), int(d.errors), '–', perEvent(d, 'server'), cpuText(d.cpu),
          ];
        }),
      ),
      ...rows.map(({ engine, guard, auth, result, baseline, durable: floor, guarded }) => [
        `${auth}, validation ${engine}, ${GUARD_LABEL[guard]}`,
        int(result.acceptedPerS),
        pct(result.acceptedPerS / baseline.acceptedPerS),
        pct(result.acceptedPerS / floor.acceptedPerS),
        guarded ? pct(result.acceptedPerS / guarded.acceptedPerS) : '–',
        guard === 'on' && legacyOf(engine, auth) ? pct(result.acceptedPerS / legacyOf(engine, auth).acceptedPerS) : guard === 'legacy' ? '100 %' : '–',
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
  out.push(...frontVsGuard({ auths, durable, rows }));
  return `${out.join('\n')}\n`;
}

main().then(
  () => cleanup().then(() => process.exit(0)),
  (err) => {
    say(`FAILED: ${err.stack ?? err}`);
    cleanup().finally(() => process.exit(1));
  },
);
