/**
 * `node bench/server-ab.mjs [--old /work/bench-old/dist] [--old-node /usr/bin/node]
 *  [--new dist] [--rounds 3] [--threads 1,2] [--profile] [--new-args='--flag ...']` (on Node 24, after `npm run build`):
 * the HTTP server that serves ingress now (our strict parser, src/http/server.ts)
 * against the two ways the last uWS build (6602ca9) served it, in ONE run:
 *
 *   old front+uWS  the old build's dist/cli.js on the old Node, server.headerGuard
 *                  true (its default): the strict parser on a relay thread,
 *                  re-serializing each request over a Unix socket to uWS
 *   old uWS alone  the same build with server.headerGuard false: uWS owns the port
 *   new server     this tree's dist/cli.js (or --new, e.g. a build kept aside with
 *                  keep-build.sh) on this Node; the bare `own` floor loads the same dist/
 *
 * each a fresh `streamgate start --roles ingress` node at every --threads count
 * (old front+uWS at threads > 1: one guard thread relays every connection), on
 * a fresh topic per phase, under the same autocannon load (API-key queue,
 * BENCH_CONNECTIONS 50, BENCH_BODY_BYTES 1024, BENCH_KEYS 1000, BENCH_DURATION
 * 10 s + warm-up); plus, once per round, the bare floors (bare-server.mjs):
 * node:http and our HttpServer with a trivial dispatch. Variants rotate every
 * round (ABC, BCA, CAB, ...). Figures: accepted events/s, p99, and the
 * streamgate process's CPU µs per accepted event (/proc/<pid>/stat, every
 * thread), medians over rounds, and the new server's ratios against both old
 * variants, taken per round (same minutes of the same box) then the median.
 *
 * --new-args adds a fourth variant: the new server with those Node options
 * (e.g. '--max-semi-space-size=16'), to weigh a runtime setting in the same run.
 *
 * The issue's target: new CPU/event <= 60 % of old front+uWS and <= old uWS
 * alone. Unmet (or --profile), a last phase runs the new server at threads 1
 * under --cpu-prof and the report gets lib/profile-summary.mjs's tables.
 * Results: console and bench/results/server-ab.md.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { readOptions } from './lib/options.mjs';
import { onCleanup, runWithCleanup } from './lib/cleanup.mjs';
import { forkChild, stopChild, waitForMessage } from './lib/children.mjs';
import { freePort } from './lib/ports.mjs';
import { createBenchDatabase, dropBenchDatabase } from './lib/bench-db.mjs';
import { kafkaAdmin } from './lib/kafka-admin.mjs';
import { PARTITIONS } from './lib/phase-log.mjs';
import { bootstrapTenant, clusterEnv, startStreamgate } from './lib/streamgate.mjs';
import { makeBody, makeRequests, runLoad } from './lib/load.mjs';
import { cpuSeconds, findPid, startCpuMeter, startThreadMeter } from './lib/cpu.mjs';
import { summarise } from './lib/profile-summary.mjs';
import { int, pct, table } from './lib/table.mjs';
import { say } from './lib/say.mjs';

const OLD_START_FLAGS = [`--max-old-space-size=${process.env.STREAMGATE_MAX_HEAP_MB ?? '256'}`];
const RESULTS = fileURLToPath(new URL('./results/server-ab.md', import.meta.url));
const BARE_SERVER = fileURLToPath(new URL('./bare-server.mjs', import.meta.url));
const TARGET_VS_FRONT = 0.6;

async function main() {
  const { values } = parseArgs({
    options: {
      old: { type: 'string', default: '/work/bench-old/dist' },
      new: { type: 'string', default: fileURLToPath(new URL('../dist', import.meta.url)) },
      // what the report calls the new build when --new is not in a git tree (e.g. "7f554cf, kept aside")
      'new-label': { type: 'string' },
      'old-node': { type: 'string', default: '/usr/bin/node' },
      rounds: { type: 'string', default: '3' },
      threads: { type: 'string', default: '1,2' },
      profile: { type: 'boolean', default: false },
      'new-args': { type: 'string' },
    },
  });
  const oldDist = resolve(values.old);
  const NEW_DIST = resolve(values.new);
  for (const dir of [oldDist, NEW_DIST]) if (!existsSync(join(dir, 'cli.js'))) throw new Error(`${dir}/cli.js is missing (build it first)`);
  const rounds = Number(values.rounds);
  const threadCounts = values.threads.split(',').map(Number);
  const options = readOptions([], process.env);
  const versions = { old: execFileSync(values['old-node'], ['--version'], { encoding: 'utf8' }).trim(), new: process.version };
  const builds = { old: commitOf(join(oldDist, '..')), new: values['new-label'] ?? commitOf(join(NEW_DIST, '..')) };
  const loadAtStart = loadavg().map((l) => l.toFixed(2)).join(' / ');
  const runId = `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
  const workDir = await mkdtemp(join(tmpdir(), 'sg-server-ab-'));
  const brokers = (process.env.KAFKA_BROKERS || '127.0.0.1:9092').split(',');
  say(`server A/B ${runId}: old ${builds.old} on node ${versions.old}, new ${builds.new} on node ${versions.new}; ${rounds} rounds, threads ${threadCounts.join(',')}; load ${loadAtStart}; logs in ${workDir}`);

  // ---- backends: a fresh database (shared by both builds: same migrations), one topic per phase ----
  const db = await createBenchDatabase(runId);
  onCleanup(() => dropBenchDatabase(db.name));
  const kafka = kafkaAdmin(brokers);
  const topics = new Set();
  onCleanup(async () => {
    for (const topic of topics) await kafka.deleteTopic(topic).catch((err) => say(`cleanup ${topic}: ${err.message}`));
    await kafka.close().catch(() => {});
  });
  // Each build its own YAML: the old one refuses unknown keys, the new one refuses server.headerGuard.
  const yaml = async (name, extra) => {
    const file = join(workDir, `streamgate-${name}.yaml`);
    await writeFile(file, `redis:\n  keyPrefix: "sgbench-${runId}:"\n${extra}`);
    return file;
  };
  const variants = [
    // The old build as its own start.sh ran it: a heap cap, no young-generation setting.
    { key: 'front', label: 'old front+uWS', cli: join(oldDist, 'cli.js'), node: values['old-node'], config: await yaml('old-front', 'server:\n  headerGuard: true\n'), startFlags: OLD_START_FLAGS },
    { key: 'uws', label: 'old uWS alone', cli: join(oldDist, 'cli.js'), node: values['old-node'], config: await yaml('old-uws', 'server:\n  headerGuard: false\n'), startFlags: OLD_START_FLAGS },
    { key: 'new', label: 'new server', cli: join(NEW_DIST, 'cli.js'), node: process.execPath, config: await yaml('new', '') },
  ];
  const candidateArgs = values['new-args']?.split(' ').filter(Boolean) ?? [];
  if (candidateArgs.length) {
    variants.push({ ...variants[2], key: 'cand', label: `new server ${candidateArgs.join(' ')}`, nodeArgs: candidateArgs });
  }
  const env = (config, topic) => clusterEnv({ databaseUrl: db.url, brokers, topic, group: `${topic}-g`, configFile: config });

  const setupTopic = `sg-bench-${runId}-setup`;
  topics.add(setupTopic);
  await kafka.createTopic(setupTopic, PARTITIONS);
  const creds = await bootstrapTenant(env(variants[2].config, setupTopic));
  const mgmt = await startStreamgate({ name: 'management', env: env(variants[2].config, setupTopic), port: await freePort(), roles: ['management'], logFile: join(workDir, 'management.log') });
  const put = await fetch(`${mgmt.base}/v1/tenants/${creds.tenantPublicId}/queues/bench-api`, {
    method: 'PUT',
    headers: { 'x-api-key': creds.buildKey, 'x-license-publicid': creds.licensePublicId, 'content-type': 'application/json' },
    body: '{}',
  });
  if (put.status >= 300) throw new Error(`PUT /queues/bench-api: ${put.status} ${await put.text()}`);
  await stopChild(mgmt.child);

  const requests = makeRequests({ path: `/events/${creds.tenantPublicId}/bench-api`, headers: { 'content-type': 'application/json', 'x-api-key': creds.ingressKey }, body: makeBody(options.bodyBytes), keys: options.keys });
  const load = (port, duration) => runLoad({ url: `http://127.0.0.1:${port}`, requests, duration, connections: options.connections, pipelining: options.pipelining });
  const warmup = Math.max(options.warmup, 3);
  const kafkaPid = findPid('kafka.Kafka');

  /** One measured phase against a listening process `pid` on `port`. */
  const measure = async (port, pid) => {
    await load(port, warmup);
    const cpu0 = cpuSeconds(pid);
    const cores = startCpuMeter({ server: pid, autocannon: process.pid, ...(kafkaPid ? { kafka: kafkaPid } : {}) });
    const threads = startThreadMeter(pid);
    const r = await load(port, options.duration);
    const cpuS = cpuSeconds(pid) - cpu0;
    return { ...r, cpuS, us: (cpuS * 1e6) / Math.max(1, r.accepted), cores: cores(), threads: threads() };
  };

  /** A fresh ingress-only node of `v` at `threads`, on a fresh topic; stopped and its topic deleted after. */
  const runVariant = async (v, threads, round) => {
    const label = `${v.key}-t${threads}-r${round}`;
    const topic = `sg-bench-${runId}-${label}`;
    topics.add(topic);
    await kafka.createTopic(topic, PARTITIONS);
    const sg = await startStreamgate({ name: label, env: env(v.config, topic), port: await freePort(), roles: ['ingress'], threads, cli: v.cli, node: v.node, nodeArgs: v.nodeArgs ?? [], startFlags: v.startFlags ?? null, logFile: join(workDir, `${label}.log`) });
    let r;
    try {
      r = await measure(new URL(sg.base).port, sg.child.pid);
    } finally {
      const stopped = await stopChild(sg.child, 30_000);
      if (stopped.killed || stopped.code !== 0) say(`${label}: exit ${stopped.signal ?? stopped.code}${stopped.killed ? ' (killed)' : ''}`);
      const problems = sg.logs.problems().filter((p) => !p.key.includes('serving on port'));
      if (problems.length) say(`${label} logged ${problems.map((p) => `${p.count}× ${p.key}`).join('; ')}`);
    }
    await kafka.deleteTopic(topic).then(() => topics.delete(topic), () => {});
    say(`${v.label}, threads ${threads}, round ${round}: ${int(r.acceptedPerS)} ev/s, p99 ${r.p99} ms, ${r.us.toFixed(1)} µs CPU/event (streamgate ${r.cores.server} %, autocannon ${r.cores.autocannon} %, others ${r.cores.others} %)${r.non2xx || r.errors ? `, non-2xx ${r.non2xx}, errors ${r.errors}` : ''}`);
    return r;
  };

  const runBare = async (kind, round) => {
    const child = forkChild(`bare-${kind}-r${round}`, BARE_SERVER, [kind], { env: { ...process.env, BENCH_DIST: NEW_DIST } });
    const { port } = await waitForMessage(child, 'ready');
    let r;
    try {
      r = await measure(port, child.pid);
    } finally {
      await stopChild(child);
    }
    say(`bare ${kind}, round ${round}: ${int(r.acceptedPerS)} req/s, p99 ${r.p99} ms, ${r.us.toFixed(1)} µs CPU/request (server ${r.cores.server} %, autocannon ${r.cores.autocannon} %)`);
    return r;
  };

  // ---- the rounds: every variant at every thread count, then the bare floors, in rotated orders ----
  const results = Object.fromEntries(threadCounts.map((t) => [t, Object.fromEntries(variants.map((v) => [v.key, []]))]));
  const bare = { 'node-http': [], own: [] };
  for (let round = 1; round <= rounds; round++) {
    const order = variants.map((_, i) => variants[(i + round - 1) % variants.length]);
    say(`round ${round}: ${order.map((v) => v.label).join(', ')}`);
    for (const threads of threadCounts) for (const v of order) results[threads][v.key].push(await runVariant(v, threads, round));
    for (const kind of round % 2 ? ['node-http', 'own'] : ['own', 'node-http']) bare[kind].push(await runBare(kind, round));
  }

  // ---- medians and same-round ratios ----
  const median = (xs) => {
    const s = [...xs].sort((a, b) => a - b);
    return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
  };
  const summary = {};
  for (const t of threadCounts) {
    const per = results[t];
    const ratio = (key, ref, field) => median(per[key].map((r, i) => r[field] / per[ref][i][field]));
    summary[t] = Object.fromEntries(variants.map((v) => [v.key, {
      perS: median(per[v.key].map((r) => r.acceptedPerS)),
      p99: median(per[v.key].map((r) => r.p99)),
      us: median(per[v.key].map((r) => r.us)),
      usVsFront: ratio(v.key, 'front', 'us'),
      usVsUws: ratio(v.key, 'uws', 'us'),
      perSVsFront: ratio(v.key, 'front', 'acceptedPerS'),
      perSVsUws: ratio(v.key, 'uws', 'acceptedPerS'),
    }]));
  }
  const met = threadCounts.map((t) => ({ t, front: summary[t].new.usVsFront <= TARGET_VS_FRONT, uws: summary[t].new.usVsUws <= 1 }));
  const allMet = met.every((m) => m.front && m.uws);

  // ---- a profile of the new server when the target is not met (or asked for) ----
  let profileText = '';
  if (!allMet || values.profile) {
    const dir = join(workDir, 'profile');
    const v = { ...variants[2], key: 'new-profiled' };
    const label = 'new-t1-profile';
    const topic = `sg-bench-${runId}-${label}`;
    topics.add(topic);
    await kafka.createTopic(topic, PARTITIONS);
    const sg = await startStreamgate({ name: label, env: env(v.config, topic), port: await freePort(), roles: ['ingress'], cli: v.cli, node: v.node, nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${dir}`], logFile: join(workDir, `${label}.log`) });
    const r = await measure(new URL(sg.base).port, sg.child.pid);
    await stopChild(sg.child, 30_000);
    say(`profiled new server: ${int(r.acceptedPerS)} ev/s, ${r.us.toFixed(1)} µs CPU/event (under --cpu-prof)`);
    // The profile starts with the process: leave out its start and the warm-up.
    profileText = profileSummary(dir, r, sg.readyMs / 1000 + warmup);
  }

  // ---- the report ----
  const loadAtEnd = loadavg().map((l) => l.toFixed(2)).join(' / ');
  const f1 = (n) => n.toFixed(1);
  const lines = [
    '# The new HTTP server against the old front+uWS and uWS alone (bench/server-ab.mjs)',
    '',
    `- date: ${new Date().toISOString()}; ${cpus().length} CPUs (${cpus()[0]?.model ?? '?'}); load average at the start ${loadAtStart}, at the end ${loadAtEnd} (1/5/15 min; a shared box, other test runs going on)`,
    `- old = \`${oldDist}/cli.js\` (${builds.old}) on node ${versions.old}; new = \`${NEW_DIST}/cli.js\` (${builds.new}) on node ${versions.new}`,
    `- each phase: a fresh \`streamgate start --roles ingress [--threads N]\` node on a fresh ${PARTITIONS}-partition topic (Kafka acks=all), API-key queue; autocannon in the bench process: ${options.connections} connections, pipelining ${options.pipelining}, ${options.bodyBytes} B JSON bodies, ${options.keys} partition keys, ${warmup} s warm-up then ${options.duration} s measured`,
    `- ${rounds} rounds; each round every variant at threads ${threadCounts.join(' then ')}, in a rotated order (ABC, BCA, CAB, ...), then the two bare floors`,
    '- CPU µs/event: CPU seconds of the streamgate process (all threads, /proc/<pid>/stat) over the measured window / 2xx answers in it. Figures are medians over the rounds; ratios are taken per round (the same minutes of the same box) and their median reported.',
    '',
  ];
  for (const t of threadCounts) {
    const s = summary[t];
    lines.push(`## --threads ${t}`, '');
    lines.push(table(
      ['variant', 'accepted ev/s', 'p99 ms', 'CPU µs/event', 'per round µs/event', 'CPU/event vs old front+uWS', 'CPU/event vs old uWS alone', 'ev/s vs old front+uWS', 'ev/s vs old uWS alone'],
      variants.map((v) => [
        v.label, int(s[v.key].perS), String(s[v.key].p99), f1(s[v.key].us), results[t][v.key].map((r) => f1(r.us)).join(' / '),
        pct(s[v.key].usVsFront), pct(s[v.key].usVsUws), pct(s[v.key].perSVsFront), pct(s[v.key].perSVsUws),
      ]),
    ));
    lines.push('');
    lines.push('Last round, CPU % of one core: streamgate threads (main, named helpers, workers summed as "node"), autocannon, Kafka, everything else:', '');
    for (const v of variants) {
      const r = results[t][v.key].at(-1);
      const threads = Object.entries(r.threads).filter(([, p]) => p > 0).sort((a, b) => b[1] - a[1]).map(([who, p]) => `${who} ${p}`).join(', ');
      lines.push(`- ${v.label}: ${threads}; autocannon ${r.cores.autocannon}, kafka ${r.cores.kafka ?? '?'}, others ${r.cores.others}${r.non2xx || r.errors ? `; **non-2xx ${r.non2xx}, errors ${r.errors}**` : ''}`);
    }
    lines.push('');
  }
  const bareMed = (kind, field) => median(bare[kind].map((r) => r[field]));
  lines.push('## Bare floors (bench/bare-server.mjs: read the body, answer 202 at once; one process, one thread)', '');
  lines.push(table(
    ['server', 'requests/s', 'p99 ms', 'CPU µs/request', 'per round µs/request', 'CPU/request vs node:http (per round, median)'],
    ['node-http', 'own'].map((kind) => [
      kind === 'own' ? 'our HttpServer (dist/http/server.js), trivial dispatch' : 'node:http',
      int(bareMed(kind, 'acceptedPerS')), String(bareMed(kind, 'p99')), f1(bareMed(kind, 'us')), bare[kind].map((r) => f1(r.us)).join(' / '),
      pct(median(bare[kind].map((r, i) => r.us / bare['node-http'][i].us))),
    ]),
  ));
  lines.push('', '## Target (the issue): new CPU/event ≤ 60 % of old front+uWS and ≤ old uWS alone', '');
  for (const m of met) {
    const s = summary[m.t].new;
    lines.push(`- threads ${m.t}: ${pct(s.usVsFront)} of old front+uWS (${m.front ? 'met' : '**not met**'}), ${pct(s.usVsUws)} of old uWS alone (${m.uws ? 'met' : '**not met**'})`);
    const c = summary[m.t].cand;
    if (c) lines.push(`  - with ${candidateArgs.join(' ')}: ${pct(c.usVsFront)} of old front+uWS, ${pct(c.usVsUws)} of old uWS alone, ${pct(median(results[m.t].cand.map((r, i) => r.us / results[m.t].new[i].us)))} of the new server's CPU/event without them`);
  }
  lines.push('');
  if (profileText) lines.push(profileText, '');
  const text = `${lines.join('\n')}\n`;
  await writeFile(RESULTS, text);
  process.stdout.write(`\n${text}`);
  say(`written ${RESULTS}`);
}

/** `git describe`-like label of the tree a dist/ was built from: short commit, and whether its src/ differs. */
function commitOf(repo) {
  try {
    const rev = execFileSync('git', ['-C', repo, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['-C', repo, 'status', '--porcelain', '--', 'src'], { encoding: 'utf8' }).trim();
    return `${rev}${dirty ? ' + uncommitted src/ changes' : ''}`;
  } catch {
    return 'unknown commit';
  }
}

/** lib/profile-summary.mjs's owner and function tables of the profiles in `dir`, warm-up left out. */
function profileSummary(dir, r, skipS) {
  const out = ['## Where the new server spends its CPU (threads 1, --cpu-prof, one more phase)', ''];
  out.push(`Under the profiler: ${int(r.acceptedPerS)} ev/s, ${r.us.toFixed(1)} µs CPU/event. Self time per thread (one .cpuprofile each; threads busy under 0.2 s left out) after the process's start and warm-up (${skipS.toFixed(1)} s); shares are of the thread's busy (not idle) time. "ours: x/" is dist/x/, a package by name, node internals with no caller of ours or a package's as such.`, '');
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'))) {
    const profile = JSON.parse(readFileSync(join(dir, file), 'utf8'));
    const { total, fns, owners } = summarise(profile, skipS);
    const idle = owners.get('(idle)') ?? 0;
    const busy = total - idle;
    if (busy < 2e5) continue;
    owners.delete('(idle)');
    fns.delete('(idle) (native/vm)');
    const rows = (map, top) => [...map].sort((a, b) => b[1] - a[1]).slice(0, top).map(([name, us]) => [`\`${name}\``, (us / 1000).toFixed(0), `${((100 * us) / busy).toFixed(1)} %`]);
    out.push(`### ${file}: ${(total / 1e6).toFixed(1)} s sampled, ${(busy / 1e6).toFixed(1)} s busy`, '');
    out.push(table(['owner (nearest frame of ours or a package)', 'self ms', 'share'], rows(owners, 15)), '');
    out.push(table(['function (self)', 'self ms', 'share'], rows(fns, 20)), '');
  }
  return out.join('\n');
}

runWithCleanup(main);
