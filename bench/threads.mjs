/**
 * `node bench/threads.mjs` (needs `npm run build`): a threaded node
 * (`streamgate start --threads N`, docs/threads.md) against one thread, in one
 * run, on the machine's Kafka, Redis and Postgres.
 *
 * 1. Ingress only (`--roles ingress`), accepted events/s and p99: threads 1
 *    and threads N (every thread listens on the port with SO_REUSEPORT, the
 *    kernel spreads connections). Phases alternate over BENCH_ROUNDS rounds
 *    (default 2, the order reversed every other round); figures are the sums
 *    over the rounds.
 * 2. End to end, all roles in one process: delivered
 *    events/s at threads 1 and N (a fresh topic and consumer group each; the
 *    receiver is bench/receiver.mjs, answering at once).
 *
 * Options as bench/run.mjs (--duration, --connections, --bodyBytes, --keys,
 * --warmup or BENCH_*); BENCH_THREADS (default 2) is N. Results: console and
 * bench/results/threads.md.
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
import { bootstrapTenant, clusterEnv, configureRoute, startStreamgate } from './lib/streamgate.mjs';
import { makeBody, makeRequests, runLoad } from './lib/load.mjs';
import { readdirSync, readFileSync } from 'node:fs';
import { startCpuMeter } from './lib/cpu.mjs';
import { startReceiver } from './lib/receiver-client.mjs';
import { int, pct, table } from './lib/table.mjs';

const RESULTS = fileURLToPath(new URL('./results/threads.md', import.meta.url));
const CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url));

/** CPU % of one core per thread of `pid` over a phase, busiest first (only threads above 3 %): is one thread the limit? */
function startTidMeter(pid) {
  const read = () => {
    const out = new Map();
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      try {
        const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        out.set(tid, (Number(fields[11]) + Number(fields[12])) / 100);
      } catch {
        // gone
      }
    }
    return out;
  };
  const t0 = performance.now();
  const before = read();
  return () => {
    const wallS = (performance.now() - t0) / 1000;
    return [...read()]
      .map(([tid, s]) => ({ tid, pct: Math.round(((s - (before.get(tid) ?? 0)) / wallS) * 100), main: tid === String(pid) }))
      .filter((x) => x.pct > 3)
      .sort((a, b) => b.pct - a.pct)
      .map((x) => `${x.pct}${x.main ? ' (main)' : ''}`)
      .join(', ');
  };
}

async function main() {
  if (!existsSync(CLI)) throw new Error('dist/cli.js is missing: run `npm run build` first');
  const options = readOptions();
  const threads = Number(process.env.BENCH_THREADS ?? 2);
  const rounds = Number(process.env.BENCH_ROUNDS ?? 2);
  const runId = `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
  const workDir = await mkdtemp(join(tmpdir(), 'sg-bench-threads-'));
  const brokers = (process.env.KAFKA_BROKERS ?? '127.0.0.1:9092').split(',');
  say(`run ${runId}; threads 1 and ${threads}; ${rounds} rounds; logs in ${workDir}`);

  const db = await createBenchDatabase(runId);
  onCleanup(() => dropBenchDatabase(db.name));
  const kafka = kafkaAdmin(brokers);
  const topics = [];
  onCleanup(async () => {
    for (const topic of topics) for (const problem of await kafka.cleanup(topic, [])) say(`cleanup: ${problem}`);
  });
  const configFile = async (name) => {
    const file = join(workDir, `streamgate-${name}.yaml`);
    await writeFile(file, `redis:\n  keyPrefix: "sgbench-${runId}:"\n`);
    return file;
  };
  const env = async (name, { threadCount, topic }) => {
    if (!topics.includes(topic)) topics.push(topic);
    return { ...clusterEnv({ databaseUrl: db.url, brokers, topic, group: `sg-bench-${runId}-${name}`, configFile: await configFile(name), extra: { STREAMGATE_ALLOW_NETWORKS: '127.0.0.0/8' } }), STREAMGATE_THREADS: String(threadCount) };
  };
  const ingressTopic = `sg-bench-${runId}`;
  const creds = await bootstrapTenant(await env('setup', { threadCount: 1, topic: ingressTopic }));
  const mgmt = await startStreamgate({ name: 'management', env: await env('setup', { threadCount: 1, topic: ingressTopic }), port: await freePort(), roles: ['management'], logFile: join(workDir, 'management.log') });
  const receiver = await startReceiver({ bodyBytes: options.bodyBytes });
  onCleanup(() => stopChild(receiver.child));
  const path = await configureRoute({ base: mgmt.base, creds, queue: 'bench', target: 'bench-target', targetUrl: receiver.url });
  await stopChild(mgmt.child);
  const requests = makeRequests({ path, headers: { 'content-type': 'application/json', 'x-api-key': creds.ingressKey }, body: makeBody(options.bodyBytes), keys: options.keys });
  const load = (base, seconds) => runLoad({ url: base, requests, duration: seconds, connections: options.connections, pipelining: options.pipelining });

  // 1. Ingress only.
  const variants = [
    { name: 't1', label: 'threads 1', threadCount: 1 },
    { name: `t${threads}`, label: `threads ${threads} (SO_REUSEPORT)`, threadCount: threads },
  ];
  const ingress = Object.fromEntries(variants.map((v) => [v.name, { ...v, accepted: 0, seconds: 0, p99: [], cpuS: 0 }]));
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? variants : [...variants].reverse();
    for (const v of order) {
      const node = await startStreamgate({ name: `ingress-${v.name}-${round}`, env: await env(v.name, { ...v, topic: ingressTopic }), port: await freePort(), roles: ['ingress'], logFile: join(workDir, `ingress-${v.name}-${round}.log`) });
      await load(node.base, Math.max(options.warmup, 3));
      const cpu = startCpuMeter({ streamgate: node.child.pid });
      const perThread = startTidMeter(node.child.pid);
      const r = await load(node.base, options.duration);
      const used = cpu();
      const threadsCpu = perThread();
      const entry = ingress[v.name];
      entry.threadsCpu = threadsCpu;
      entry.accepted += r.accepted;
      entry.seconds += r.durationS;
      entry.p99.push(r.p99);
      entry.cpuS += ((used.streamgate ?? 0) / 100) * r.durationS;
      say(`ingress ${v.label}, round ${round + 1}: ${int(r.acceptedPerS)} ev/s, p99 ${r.p99} ms, streamgate CPU ${used.streamgate} % (per thread: ${threadsCpu}), others ${used.others} %`);
      await stopChild(node.child);
    }
  }

  // 2. End to end, all roles.
  const e2e = [];
  for (const threadCount of [1, threads]) {
    const name = `e2e-t${threadCount}`;
    const topic = `sg-bench-${runId}-${name}`;
    const node = await startStreamgate({ name, env: await env(name, { threadCount, topic }), port: await freePort(), logFile: join(workDir, `${name}.log`) });
    await load(node.base, Math.max(options.warmup, 3));
    // Let the warm-up drain, then count from a quiet receiver.
    await receiver.waitForUnique(Number.MAX_SAFE_INTEGER, 3_000);
    await receiver.reset();
    const cpu = startCpuMeter({ streamgate: node.child.pid });
    const perThread = startTidMeter(node.child.pid);
    const startedAt = Date.now();
    const r = await load(node.base, options.duration);
    const stats = await receiver.waitForUnique(r.accepted, 60_000);
    const used = cpu();
    const threadsCpu = perThread();
    const seconds = (Math.max(stats.lastAt ?? Date.now(), startedAt + r.durationS * 1000) - startedAt) / 1000;
    const row = { threadCount, accepted: r.accepted, acceptedPerS: r.acceptedPerS, p99: r.p99, delivered: stats.unique, deliveredPerS: stats.unique / seconds, cpu: used.streamgate, cpuUsPerEvent: ((used.streamgate / 100) * seconds * 1e6) / Math.max(1, stats.unique), threadsCpu };
    e2e.push(row);
    say(`end to end threads ${threadCount}: accepted ${int(r.acceptedPerS)} ev/s (p99 ${r.p99} ms), delivered ${int(row.deliveredPerS)} ev/s (${stats.unique}/${r.accepted}), streamgate CPU ${used.streamgate} % (per thread: ${threadsCpu}), others ${used.others} %`);
    await stopChild(node.child);
  }

  const one = ingress.t1;
  const rate = (e) => e.accepted / e.seconds;
  const lines = [
    '# A threaded node against one thread (bench/threads.mjs)',
    '',
    `- date: ${new Date().toISOString()}; node ${process.version}, ${cpus().length} CPUs; load average at the end ${loadavg().map((l) => l.toFixed(1)).join(' / ')}`,
    `- ${options.duration} s phases, ${options.connections} connections, ${options.bodyBytes} B JSON, ${options.keys} keys; ingress phases in ${rounds} rounds (order reversed every other round), figures summed over them`,
    '- the load generator (autocannon) runs in the bench process on the same machine as streamgate, Kafka, Redis and Postgres',
    '',
    '## Ingress only (`--roles ingress`)',
    '',
    table(
      ['variant', 'accepted ev/s', 'vs threads 1', 'p99 ms (per round)', 'streamgate CPU µs/event', 'busiest threads, % of a core (last round)'],
      variants.map((v) => {
        const e = ingress[v.name];
        return [v.label, int(rate(e)), pct(rate(e) / rate(one)), e.p99.join(' / '), int((e.cpuS * 1e6) / Math.max(1, e.accepted)), e.threadsCpu];
      }),
    ),
    '',
    '## End to end, all roles',
    '',
    table(
      ['threads', 'accepted ev/s', 'p99 ms', 'delivered ev/s', 'delivered / accepted', 'streamgate CPU %', 'CPU µs per delivered event', 'busiest threads, % of a core'],
      e2e.map((r) => [String(r.threadCount), int(r.acceptedPerS), String(r.p99), int(r.deliveredPerS), `${r.delivered} / ${r.accepted}`, String(r.cpu), int(r.cpuUsPerEvent), r.threadsCpu]),
    ),
    '',
    `- delivered events/s, threads ${threads} vs 1: ${pct(e2e[1].deliveredPerS / e2e[0].deliveredPerS)}`,
    '',
  ];
  await writeFile(RESULTS, lines.join('\n'));
  say(lines.join('\n'));
}

runWithCleanup(main);
