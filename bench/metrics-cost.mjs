/**
 * `node bench/metrics-cost.mjs` (needs `npm run build` once): what Prometheus
 * metrics cost ingress, measured in one run. Two `streamgate start --roles
 * ingress` nodes on the same database, topic and Redis, identical but for
 * `metrics.enabled` (on: A, off: B), take turns under the same load in ABBA
 * order (A B B A, then B A A B every other pair of rounds; BENCH_ROUNDS, default 4), so drift on the
 * shared machine falls on both alike; the idle node waits meanwhile. Both
 * nodes are started afresh each round, A first in odd rounds and B first in
 * even ones (BENCH_CONTROL=1, an A/A run with metrics off on both, found the
 * node started first a few % apart for a whole run). Each
 * phase gives accepted events/s and the node's CPU µs per event; the report
 * compares the sums of A's phases with B's. Node A is scraped (GET /metrics)
 * between its phases, as Prometheus would, and the last scrape's streamgate_*
 * lines are kept in the report.
 *
 * Options as bench/run.mjs (--duration, --connections, --bodyBytes, --keys,
 * --warmup or BENCH_*). Results: console and bench/results/metrics-cost.md.
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readOptions } from './lib/options.mjs';
import { stopChild } from './lib/children.mjs';
import { onCleanup, runWithCleanup } from './lib/cleanup.mjs';
import { say } from './lib/say.mjs';
import { freePort } from './lib/ports.mjs';
import { createBenchDatabase, dropBenchDatabase } from './lib/bench-db.mjs';
import { kafkaAdmin } from './lib/kafka-admin.mjs';
import { bootstrapTenant, clusterEnv, startStreamgate } from './lib/streamgate.mjs';
import { makeBody, makeRequests, runLoad } from './lib/load.mjs';
import { startCpuMeter } from './lib/cpu.mjs';
import { int, pct, table } from './lib/table.mjs';

const RESULTS = fileURLToPath(new URL('./results/metrics-cost.md', import.meta.url));
const CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url));

/**
 * The subscribers' own cost, without the noise of a loaded machine: in this
 * process, the channel messages one accepted event publishes (answered, which
 * carries the append time and bytes, and a 1/20 share of a produce flush) are published
 * `n` times with a node's metrics subscribed and without, alternating, the
 * best of each kept. Returns ns per event for both.
 */
async function hotPathCost(n = 200_000, rounds = 5) {
  const channels = await import('../dist/observability/channels.js');
  const { createNodeMetrics } = await import('../dist/observability/metrics-registry.js');
  const { MetricSources } = await import('../dist/observability/metric-sources.js');
  const { loadConfig } = await import('../dist/config/load-config.js');
  const sql = Object.assign(() => Promise.reject(new Error('no database')), { options: { connection: { application_name: 'bench' } } });
  const exchange = { route: '/events/:tenant/:queue', method: 'POST', status: 202, errorCode: null, ingress: { queue: null, bytes: -1, appendMs: -1, replayed: false } };
  const queue = { tenantPublicId: 'ten_x', queueName: 'q' };
  const oneEvent = (i) => {
    // As post-event.ts and exchange.ts do it, hasSubscribers guards included: one message per request.
    const started = channels.answeredChannel.hasSubscribers ? performance.now() : 0;
    if (started !== 0) exchange.ingress.appendMs = performance.now() - started;
    exchange.ingress.queue = queue;
    exchange.ingress.bytes = 1024;
    if (channels.answeredChannel.hasSubscribers) channels.answeredChannel.publish(exchange);
    if (i % 20 === 0 && channels.produceChannel.hasSubscribers) channels.produceChannel.publish({ records: 20, attempts: 1, ok: true });
  };
  const time = () => {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < n; i++) oneEvent(i);
    return Number(process.hrtime.bigint() - t0) / n;
  };
  const best = { on: Infinity, off: Infinity };
  for (let r = 0; r < rounds; r++) {
    best.off = Math.min(best.off, time());
    const metrics = createNodeMetrics(loadConfig({}, {}), new MetricSources(), sql);
    best.on = Math.min(best.on, time());
    metrics.close();
    metrics.registry.clear();
  }
  return best;
}

async function main() {
  if (!existsSync(CLI)) throw new Error('dist/cli.js is missing: run `npm run build` first');
  const options = readOptions();
  const micro = await hotPathCost();
  say(`hot path in-process: ${micro.on.toFixed(0)} ns/event with metrics subscribed, ${micro.off.toFixed(0)} ns without`);
  const rounds = Number(process.env.BENCH_ROUNDS ?? 4);
  const runId = `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
  const workDir = await mkdtemp(join(tmpdir(), 'sg-bench-metrics-'));
  const brokers = (process.env.KAFKA_BROKERS ?? '127.0.0.1:9092').split(',');
  const topic = `sg-bench-${runId}`;
  say(`run ${runId}; ${rounds} ABBA rounds; logs in ${workDir}`);

  const db = await createBenchDatabase(runId);
  onCleanup(() => dropBenchDatabase(db.name));
  const kafka = kafkaAdmin(brokers);
  onCleanup(async () => {
    for (const problem of await kafka.cleanup(topic, [])) say(`cleanup: ${problem}`);
  });
  const configFile = (name) => join(workDir, `streamgate-${name}.yaml`);
  // BENCH_CONTROL=1: an A/A run, both nodes with metrics off, to see how far the two nodes differ without it.
  const control = process.env.BENCH_CONTROL === '1';
  for (const [name, enabled] of [['on', !control], ['off', false], ['setup', false]]) {
    await writeFile(configFile(name), `redis:\n  keyPrefix: "sgbench-${runId}:"\nmetrics:\n  enabled: ${enabled}\n`);
  }
  const env = (name) => clusterEnv({ databaseUrl: db.url, brokers, topic, group: `sg-bench-${runId}`, configFile: configFile(name) });
  const creds = await bootstrapTenant(env('setup'));
  const mgmt = await startStreamgate({ name: 'management', env: env('setup'), port: await freePort(), roles: ['management'], logFile: join(workDir, 'management.log') });
  const res = await fetch(`${mgmt.base}/v1/tenants/${creds.tenantPublicId}/queues/bench-api`, {
    method: 'PUT',
    headers: { 'x-api-key': creds.buildKey, 'x-license-publicid': creds.licensePublicId, 'content-type': 'application/json' },
    body: '{}',
  });
  if (res.status >= 300) throw new Error(`PUT queue: ${res.status} ${await res.text()}`);
  await stopChild(mgmt.child);

  // BENCH_NODE_ARGS: node flags for both ingress nodes, e.g. --cpu-prof --cpu-prof-dir=DIR (each node's profile named by its metrics setting).
  const nodeArgs = (name) => (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean).map((a) => (a.startsWith('--cpu-prof-name') ? `${a}-${name}` : a));
  const requests = makeRequests({
    path: `/events/${creds.tenantPublicId}/bench-api`,
    headers: { 'content-type': 'application/json', 'x-api-key': creds.ingressKey },
    body: makeBody(options.bodyBytes),
    keys: options.keys,
  });
  const nodes = {};
  const load = (name, seconds) => runLoad({ url: nodes[name].base, requests, duration: seconds, connections: options.connections, pipelining: options.pipelining });
  const phases = [];
  let excerpt = '';
  // Fresh nodes every round, started in the other order each time: an A/A run
  // (BENCH_CONTROL=1) showed the node started first some % slower or faster
  // for the whole of a run, which alternating phases alone does not cancel.
  for (let round = 0; round < rounds; round++) {
    const startOrder = round % 2 === 0 ? ['on', 'off'] : ['off', 'on'];
    for (const name of startOrder) {
      nodes[name] = await startStreamgate({ name: `ingress-metrics-${name}-${round}`, env: env(name), port: await freePort(), roles: ['ingress'], logFile: join(workDir, `ingress-${name}-${round}.log`), nodeArgs: nodeArgs(name) });
    }
    const check = await fetch(`${nodes.off.base}/metrics`);
    if (check.status !== 404) throw new Error(`metrics off answered /metrics with ${check.status}`);
    // A fresh node's first seconds are slower (JIT, producer metadata, caches): warm both well first.
    for (const name of startOrder) await load(name, Math.max(options.warmup, 5));
    // ABBA in rounds 1, 2 (mod 4), BAAB in rounds 3, 4: neither setting always gets the first phase.
    const order = round % 4 < 2 ? ['on', 'off', 'off', 'on'] : ['off', 'on', 'on', 'off'];
    for (const name of order) {
      if (options.warmup) await load(name, options.warmup);
      const meter = startCpuMeter({ streamgate: nodes[name].child.pid });
      const result = await load(name, options.duration);
      result.cpu = meter();
      phases.push({ name, result, round, first: startOrder[0] });
      const us = usPerEvent(result);
      say(`round ${round + 1}/${rounds} (${startOrder[0]} started first), metrics ${name}: ${Math.round(result.acceptedPerS)} ev/s, ${us.toFixed(1)} µs/event, p99 ${result.p99} ms, non-2xx ${result.non2xx}, others ${result.cpu.others} %`);
      if (name === 'on' && !control) excerpt = await (await fetch(`${nodes.on.base}/metrics`)).text();
    }
    for (const name of startOrder) await stopChild(nodes[name].child, 30_000);
  }

  const text = report({ options, rounds, phases, excerpt, micro, control });
  process.stdout.write(`\n${text}`);
  await writeFile(control ? RESULTS.replace(/\.md$/, '-control.md') : RESULTS, text);
  say(`written ${RESULTS}`);
}

const usPerEvent = (r) => ((r.cpu.streamgate / 100) * r.durationS * 1e6) / r.accepted;

function report({ options: o, rounds, phases, excerpt, micro, control }) {
  const sum = (name) => {
    const mine = phases.filter((p) => p.name === name).map((p) => p.result);
    const accepted = mine.reduce((n, r) => n + r.accepted, 0);
    const seconds = mine.reduce((n, r) => n + r.durationS, 0);
    const cpuS = mine.reduce((n, r) => n + (r.cpu.streamgate / 100) * r.durationS, 0);
    return { perS: accepted / seconds, us: (cpuS * 1e6) / accepted };
  };
  const on = sum('on');
  const off = sum('off');
  // Each ABBA round on its own: the two nodes saw nearly the same machine within a round.
  const perRound = [];
  for (let r = 0; r < rounds; r++) {
    const quad = phases.slice(r * 4, r * 4 + 4);
    const [a1, a2] = quad.filter((p) => p.name === 'on').map((p) => p.result);
    const [b1, b2] = quad.filter((p) => p.name === 'off').map((p) => p.result);
    const aPerS = (a1.accepted + a2.accepted) / (a1.durationS + a2.durationS);
    const bPerS = (b1.accepted + b2.accepted) / (b1.durationS + b2.durationS);
    const cpu = (x) => (x.cpu.streamgate / 100) * x.durationS;
    const aUs = ((cpu(a1) + cpu(a2)) * 1e6) / (a1.accepted + a2.accepted);
    const bUs = ((cpu(b1) + cpu(b2)) * 1e6) / (b1.accepted + b2.accepted);
    perRound.push({ perS: aPerS / bPerS, us: aUs / bUs });
  }
  const median = (xs) => {
    const s = [...xs].sort((a, b) => a - b);
    return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
  };
  const out = [];
  out.push('# What Prometheus metrics cost ingress (metrics.enabled on vs off, one run)');
  out.push('');
  out.push(`- date: ${new Date().toISOString()}; command: \`node bench/metrics-cost.mjs\` (BENCH_ROUNDS=${rounds})`);
  out.push(`- node ${process.version}, ${cpus().length} CPUs (${cpus()[0]?.model ?? '?'}); load average at the end ${loadavg().map((l) => l.toFixed(1)).join(' / ')} (a shared box: other work skews every figure, which is why the two nodes alternate)`);
  out.push(`- two \`streamgate start --roles ingress\` nodes, same database, topic and Redis, Kafka acks=all; A has metrics.enabled ${control ? 'false too (BENCH_CONTROL=1: an A/A run)' : 'true (scraped between its phases)'}, B false. Both started afresh every round, in the other order each round, warmed 5 s each, then ABBA (rounds 1–2 mod 4) or BAAB (rounds 3–4) (see the A/A note in the script). ${o.duration} s per phase (+${o.warmup} s warm-up each), ${o.connections} connections, body ${o.bodyBytes} B, ${o.keys} partition keys, API-key queue`);
  out.push('');
  out.push(table(
    ['phase', 'round (started first)', 'metrics', 'accepted ev/s', 'p99 ms', 'non-2xx', 'streamgate CPU %', 'CPU µs/event', 'other processes CPU %'],
    phases.map(({ name, result: r, round, first }, i) => [String(i + 1), `${round + 1} (${first})`, name, int(r.acceptedPerS), String(r.p99), int(r.non2xx), String(r.cpu.streamgate), usPerEvent(r).toFixed(1), String(r.cpu.others ?? '?')]),
  ));
  out.push('');
  out.push(table(
    ['summed over the phases', 'metrics on (A)', 'metrics off (B)', 'on / off'],
    [
      ['accepted events/s', int(on.perS), int(off.perS), pct(on.perS / off.perS)],
      ['streamgate CPU µs/event', on.us.toFixed(1), off.us.toFixed(1), pct(on.us / off.us)],
    ],
  ));
  out.push('');
  out.push(table(
    ['ABBA round', 'events/s on / off', 'CPU µs/event on / off'],
    [...perRound.map((r, i) => [String(i + 1), pct(r.perS), pct(r.us)]), ['median', pct(median(perRound.map((r) => r.perS))), pct(median(perRound.map((r) => r.us)))]],
  ));
  out.push('');
  out.push(`- events/s cost of metrics: ${pct(1 - on.perS / off.perS)} over all phases, ${pct(1 - median(perRound.map((r) => r.perS)))} by the median round (negative: A was faster); CPU per event: ${pct(on.us / off.us - 1)} over all phases, ${pct(median(perRound.map((r) => r.us)) - 1)} by the median round (positive: metrics cost CPU).`);
  out.push(`- the subscribers alone, in-process (no HTTP, no Kafka, no other load: \`hotPathCost\` above): ${(micro.on - micro.off).toFixed(0)} ns per accepted event (${micro.on.toFixed(0)} ns with metrics subscribed against ${micro.off.toFixed(0)} ns without, best of 5 alternating rounds of 200,000), that is ${pct((micro.on - micro.off) / 1000 / off.us)} of the ${off.us.toFixed(1)} µs of CPU an event costs with metrics off in the run above.`);
  out.push('');
  out.push('## /metrics of node A after its last phase (streamgate_* series; process defaults cut)');
  out.push('');
  out.push('```');
  out.push(...excerpt.split('\n').filter((l) => /^(# (HELP|TYPE) )?streamgate_(http|ingress|log|db|redis|nodejs_eventloop_lag_p99|process_resident|process_cpu_seconds_total)/.test(l)).filter((l) => !/_bucket\{le="(0\.0005|0\.0025|0\.025|0\.25|2\.5|30)"\}/.test(l)));
  out.push('```');
  return `${out.join('\n')}\n`;
}

runWithCleanup(main);
