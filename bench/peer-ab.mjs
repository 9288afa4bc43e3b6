/**
 * `node bench/peer-ab.mjs [--rounds 3] [--duration 20] [--warmup 3] [--connections 50]
 *  [--keys 200] [--body-bytes 1024] [--probe-rate 20] [--peer-concurrency 50] [--peer-workers 0] [--no-floor]
 *  [--backend kafka|embedded|kafka,embedded] [--out FILE]`
 * (on Node 24, after `npm run build` and `npm install` in bench/peer):
 * streamgate end to end against the stack a Node team would build instead
 * (bench/peer/relay.mjs: fastify + BullMQ on Redis + undici), and against the
 * floor (bench/peer/floor.mjs: a bare proxy, what any one-thread relay pays at
 * least), in ONE run, alternating rounds (each round starts with the next
 * system, so none always goes first on a warming box):
 *
 *   autocannon ──► streamgate (dist/, one node, all roles, threads 1) ──► Kafka ──► streamgate ──► receiver
 *                  (--backend embedded: the embedded log in the node's process instead of Kafka;
 *                   --backend kafka,embedded: both, each its own system in the rotation)
 *   autocannon ──► relay (fastify) ──► BullMQ/Redis ──► BullMQ Worker (undici) ──► receiver
 *   autocannon ──► floor (node:http) ──undici──► receiver, then the 202
 *
 * Same receiver process (bench/receiver.mjs), same autocannon load (connections,
 * 1 KiB JSON bodies, partition keys, API key header), warm-up, then `duration`
 * seconds measured, then a wait until everything accepted in the window is delivered.
 * A paced probe (bench/lib/paced-load.mjs, --probe-rate ev/s, bodies with "seq":N)
 * runs alongside autocannon: its events' receiver arrival minus the moment their
 * 202 was read is accept→deliver at saturation (autocannon's bodies are all alike,
 * so they cannot be matched to a send time).
 *
 * Per round: accepted ev/s; delivered ev/s within the window (distinct events
 * at the receiver by the window's end / its length) and until drained (distinct
 * events / first to last arrival, as the e2e phase of bench/run.mjs); accept→deliver
 * p50/p99 of the probe; CPU µs per delivered event of the system under test (the
 * streamgate process; every relay process) from load start to drained; CPU % of
 * one core of the other processes (Kafka broker, Redis, Postgres, receiver, this
 * process = load generator, and the rest of the machine). Ratios streamgate/peer per
 * round, then their median. Results: console and bench/results/peer-ab.md.
 */
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { execFileSync } from 'node:child_process';
import Redis from 'ioredis';
import { onCleanup, runWithCleanup } from './lib/cleanup.mjs';
import { forkChild, stopChild, waitForMessage } from './lib/children.mjs';
import { prepareBench } from './lib/bench-context.mjs';
import { PARTITIONS, benchLog } from './lib/phase-log.mjs';
import { makeBody, makeRequests, runLoad } from './lib/load.mjs';
import { startPacedLoad } from './lib/paced-load.mjs';
import { cpuSeconds, findPid, startCpuMeter } from './lib/cpu.mjs';
import { withNode } from './phases/node-run.mjs';
import { int, table } from './lib/table.mjs';
import { say } from './lib/say.mjs';

const RESULTS = fileURLToPath(new URL('./results/peer-ab.md', import.meta.url));
const RELAY = fileURLToPath(new URL('./peer/relay.mjs', import.meta.url));
const FLOOR = fileURLToPath(new URL('./peer/floor.mjs', import.meta.url));
const wall = () => performance.timeOrigin + performance.now();

async function main() {
  const { values } = parseArgs({
    allowNegative: true,
    options: {
      rounds: { type: 'string', default: '3' },
      duration: { type: 'string', default: '20' },
      warmup: { type: 'string', default: '3' },
      connections: { type: 'string', default: '50' },
      keys: { type: 'string', default: '200' },
      'body-bytes': { type: 'string', default: '1024' },
      'probe-rate': { type: 'string', default: '20' },
      'drain-timeout': { type: 'string', default: '120' },
      'peer-concurrency': { type: 'string', default: '50' },
      'peer-workers': { type: 'string', default: '0' },
      // a third system each round: bench/peer/floor.mjs, a bare one-thread relay (the box's ceiling); --no-floor leaves it out
      floor: { type: 'boolean', default: true },
      // streamgate's event log, or a comma-separated list (each its own system in the rotation): kafka (the
      // machine's broker), embedded (LMDB in the node's process: the single-machine deployment)
      backend: { type: 'string', default: 'kafka' },
      // the report's file, e.g. bench/results/peer-ab-workers1.md for another peer setting
      out: { type: 'string', default: RESULTS },
    },
  });
  const n = (name) => {
    const v = Number(values[name]);
    if (!Number.isInteger(v) || v < 0) throw new Error(`--${name} must be an integer >= 0 (got ${values[name]})`);
    return v;
  };
  const rounds = n('rounds');
  const backends = [...new Set(values.backend.split(',').map((b) => b.trim()))];
  if (!backends.length || backends.some((b) => b !== 'kafka' && b !== 'embedded')) throw new Error(`--backend must be kafka, embedded or both, comma-separated (got ${values.backend})`);
  const probeRate = n('probe-rate');
  const sgName = { kafka: 'streamgate', embedded: 'streamgate (embedded log)' };
  const peer = { concurrency: n('peer-concurrency'), workers: n('peer-workers') };
  // The shape bench-context.mjs and node-run.mjs expect (lib/options.mjs's names).
  const options = {
    duration: n('duration'), warmup: n('warmup'), connections: n('connections'), keys: n('keys'), bodyBytes: n('body-bytes'),
    pipelining: 1, rate: 0, drainTimeout: n('drain-timeout'), profile: process.env.BENCH_PROFILE === '1',
  };
  const drainMs = options.drainTimeout * 1000;
  const runId = `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
  const workDir = await mkdtemp(join(tmpdir(), 'sg-peer-ab-'));
  const startLoad = loadavg();
  const loadAtStart = startLoad.map((l) => l.toFixed(2)).join(' / ');
  const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  const redisSettings = await redisPersistence(redisUrl);
  say(`peer A/B ${runId}: ${rounds} rounds of ${options.duration} s (+${options.warmup} s warm-up); load ${loadAtStart}; Redis ${redisSettings}; logs in ${workDir}`);

  // ---- streamgate: a fresh database, tenant, queue routed to the receiver (the e2e phase's setup) ----
  const ctx = await prepareBench({ runId, workDir, options });
  const { receiver } = ctx;
  const keys = Array.from({ length: options.keys }, (_, i) => `k${i}`);

  // ---- the peer: same receiver, same body and keys, its own key; a private Redis prefix, deleted at the end ----
  const peerKey = randomBytes(24).toString('base64url');
  const peerPrefixBase = `peerbench-${runId}`;
  onCleanup(() => deleteKeys(redisUrl, `${peerPrefixBase}*`));
  const peerHeaders = { 'content-type': 'application/json', 'x-api-key': peerKey };
  const peerRequests = makeRequests({ path: '/events/bench', headers: peerHeaders, body: makeBody(options.bodyBytes), keys: options.keys });

  const others = () => {
    const pids = { broker: findPid('kafka.Kafka'), redis: findPid('redis-server'), receiver: receiver.child?.pid ?? null, load: process.pid };
    postgresPids(`sg_bench_${runId}`).forEach((pid, i) => (pids[`pg${i}`] = pid));
    return Object.fromEntries(Object.entries(pids).filter(([, pid]) => pid !== null));
  };

  /**
   * One measured round against a system listening on `port`: warm-up and drain,
   * then autocannon + the probe for `duration` s, then the drain. `accepted()`:
   * events the system has accepted so far (Kafka records; the relay's counter).
   */
  const measure = async ({ label, port, path, headers, load, sutPids, accepted }) => {
    await receiver.reset();
    if (options.warmup) {
      await load(port, options.warmup);
      const warm = await accepted();
      const drained = await receiver.waitForUnique(warm, drainMs);
      if (!drained.complete) say(`   ${label} warm-up: only ${drained.unique}/${warm} delivered before the timeout`);
    }
    await receiver.reset();
    await receiver.track(true);
    const before = await accepted();
    const cpu0 = sutPids.map(cpuSeconds);
    const meter = startCpuMeter({ ...Object.fromEntries(sutPids.map((pid, i) => [`sut${i}`, pid])), ...others() });
    const loadStart = wall();
    const probe = probeRate ? startPacedLoad({ url: `http://127.0.0.1:${port}`, path, headers, rate: probeRate, keys, bodyBytes: options.bodyBytes }) : null;
    const result = await load(port, options.duration);
    const atWindowEnd = await receiver.stats();
    await probe?.stop();
    const expected = (await accepted()) - before;
    const seen = await receiver.waitForUnique(expected, drainMs, { onProgress: (s) => say(`   ${s.unique}/${expected}`) });
    const cpuS = sutPids.map(cpuSeconds).reduce((sum, s, i) => sum + (s - cpu0[i]), 0);
    const cores = meter();
    const { seqs, ats } = await receiver.arrivals();
    await receiver.reset();

    const arrivedAt = new Map(seqs.map((seq, i) => [seq, ats[i]]));
    const latencies = [];
    for (const r of probe?.records ?? []) {
      const at = r.status === 202 ? arrivedAt.get(r.seq) : undefined;
      if (at !== undefined) latencies.push(at - r.doneAt);
    }
    const sum = (prefix) => Object.entries(cores).filter(([k, v]) => k.startsWith(prefix) && v !== null).reduce((s, [, v]) => s + v, 0);
    const spanS = seen.firstAt !== null && seen.lastAt !== null ? (seen.lastAt - seen.firstAt) / 1000 : null;
    const r = {
      label,
      acceptedPerS: expected / result.durationS,
      autocannon: result,
      expected,
      delivered: seen.unique,
      complete: seen.complete,
      duplicates: seen.duplicates,
      wrongSize: seen.wrongSize,
      inWindowPerS: atWindowEnd.unique / result.durationS,
      drainedPerS: spanS ? seen.unique / spanS : null,
      tailS: seen.lastAt !== null ? (seen.lastAt - loadStart) / 1000 - result.durationS : null,
      latency: percentiles(latencies),
      probeSent: probe?.records.length ?? 0,
      usPerEvent: (cpuS * 1e6) / Math.max(1, seen.unique),
      cpu: { sut: sum('sut'), broker: cores.broker ?? null, redis: cores.redis ?? null, postgres: sum('pg'), receiver: cores.receiver ?? null, load: cores.load ?? null, others: cores.others ?? null },
    };
    say(`   ${label}: accepted ${int(r.acceptedPerS)} ev/s, delivered ${int(r.inWindowPerS)} ev/s in the window, ${int(r.drainedPerS ?? 0)} until drained (${r.delivered}/${r.expected}, tail ${r.tailS?.toFixed(1)} s), ` +
      `accept→deliver p50 ${fmt(r.latency?.p50)} p99 ${fmt(r.latency?.p99)} ms, ${r.usPerEvent.toFixed(0)} µs CPU/delivered event; ` +
      `CPU %: ${Object.entries(r.cpu).map(([k, v]) => `${k} ${v ?? '?'}`).join(', ')}` +
      `${result.non2xx || result.errors ? `; non-2xx ${result.non2xx} ${JSON.stringify(result.statusCodes)}, errors ${result.errors}` : ''}`);
    return r;
  };

  const runStreamgate = async (backend, round) => {
    const label = `peer-ab-sg${backend === 'kafka' ? '' : `-${backend}`}-r${round}`;
    const log = benchLog(ctx, label, backend);
    await log.prepare();
    const r = await withNode(ctx, { label, env: log.env(), threads: 1 }, async (sg) =>
      measure({
        label: `${sgName[backend]} r${round}`,
        port: new URL(sg.base).port,
        path: ctx.ingress.path,
        headers: ctx.ingress.headers,
        load: ctx.load,
        sutPids: [sg.child.pid],
        accepted: () => log.countEvents(sg.base),
      }));
    if (r.problems?.length) say(`   ${label} logged ${r.problems.map((p) => `${p.count}× ${p.key}`).join('; ')}`);
    return r;
  };

  /**
   * One round of a relay of bench/peer/ (`script` forked with `env` on top of the
   * shared settings): it says `ready` with its port and pids, counts what it
   * accepted at GET /stats, and is stopped after the round.
   */
  const runRelay = async (label, script, env) => {
    const child = forkChild(label.replace(' ', '-'), script, [], {
      env: { ...process.env, PEER_PORT: '0', PEER_API_KEY: peerKey, PEER_SIGNING_SECRET: randomBytes(32).toString('hex'), PEER_TARGET_URL: receiver.url, PEER_CONCURRENCY: String(peer.concurrency), ...env },
    });
    const { port, pids } = await waitForMessage(child, 'ready', 60_000);
    const load = (p, duration) => runLoad({ url: `http://127.0.0.1:${p}`, requests: peerRequests, duration, connections: options.connections, pipelining: 1 });
    try {
      return await measure({
        label,
        port,
        path: '/events/bench',
        headers: peerHeaders,
        load,
        sutPids: pids,
        accepted: async () => (await (await fetch(`http://127.0.0.1:${port}/stats`)).json()).accepted,
      });
    } finally {
      await stopChild(child, 10_000);
    }
  };

  const runPeer = async (round) => {
    try {
      return await runRelay(`peer r${round}`, RELAY, { REDIS_URL: redisUrl, PEER_PREFIX: `${peerPrefixBase}-r${round}`, PEER_WORKERS: String(peer.workers) });
    } finally {
      await deleteKeys(redisUrl, `${peerPrefixBase}-r${round}:*`);
    }
  };
  /** The floor: a bare proxy (202 once the receiver answered), so accepted = delivered. */
  const runFloor = (round) => runRelay(`floor r${round}`, FLOOR, {});

  // One system per streamgate backend: 'sg' (Kafka, the name every earlier report used) and 'sg-embedded'.
  const sgOf = (backend) => (backend === 'kafka' ? 'sg' : `sg-${backend}`);
  const sgSystems = backends.map(sgOf);
  const systems = [...sgSystems, 'peer', ...(values.floor ? ['floor'] : [])];
  const run = { peer: runPeer, floor: runFloor };
  const name = { peer: 'peer', floor: 'floor' };
  for (const backend of backends) {
    run[sgOf(backend)] = (round) => runStreamgate(backend, round);
    name[sgOf(backend)] = sgName[backend];
  }
  // Each round starts one system later, so none always goes first on a warming box.
  const orderOf = (round) => systems.map((_, i) => systems[(i + round - 1) % systems.length]);
  const results = Object.fromEntries(systems.map((who) => [who, []]));
  for (let round = 1; round <= rounds; round++) {
    const order = orderOf(round);
    say(`round ${round}: ${order.join(', ')}`);
    for (const who of order) results[who].push(await run[who](round));
  }

  // ---- the report ----
  const median = (xs) => {
    const s = xs.filter((x) => x !== null && x !== undefined && Number.isFinite(x)).sort((a, b) => a - b);
    if (!s.length) return null;
    return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
  };
  const ratiosOf = (a, b) => (get) => results[a].map((r, i) => (get(r) && get(results[b][i]) ? get(r) / get(results[b][i]) : null));

  const loadAtEnd = loadavg().map((l) => l.toFixed(2)).join(' / ');
  const versions = peerVersions();
  const row = (who, r, round) => [
    who, String(round), int(r.acceptedPerS), int(r.inWindowPerS), r.drainedPerS ? int(r.drainedPerS) : '–', `${r.delivered}/${r.expected}${r.complete ? '' : ' **incomplete**'}`,
    r.tailS?.toFixed(1) ?? '–', fmt(r.latency?.p50), fmt(r.latency?.p99), r.usPerEvent.toFixed(0),
    ...['sut', 'broker', 'redis', 'postgres', 'receiver', 'load', 'others'].map((k) => String(r.cpu[k] ?? '?')),
  ];
  const rows = [];
  for (let i = 0; i < rounds; i++) {
    for (const who of orderOf(i + 1)) rows.push(row(name[who], results[who][i], i + 1));
  }
  const med = (who, get) => median(results[who].map(get));
  for (const who of systems) {
    const m = (get) => med(who, get);
    rows.push([`**${name[who]} median**`, '', int(m((r) => r.acceptedPerS)), int(m((r) => r.inWindowPerS)), int(m((r) => r.drainedPerS)), '', fmt(m((r) => r.tailS)),
      fmt(m((r) => r.latency?.p50)), fmt(m((r) => r.latency?.p99)), m((r) => r.usPerEvent).toFixed(0),
      ...['sut', 'broker', 'redis', 'postgres', 'receiver', 'load', 'others'].map((k) => String(m((r) => r.cpu[k]) ?? '?'))]);
  }
  const ratioRowsOf = (ratios) => [
    ['accepted ev/s', ratios((r) => r.acceptedPerS)],
    ['delivered ev/s within the window', ratios((r) => r.inWindowPerS)],
    ['delivered ev/s until drained', ratios((r) => r.drainedPerS)],
    ['accept→deliver p99 (lower is better)', ratios((r) => r.latency?.p99)],
    ['CPU µs per delivered event (lower is better)', ratios((r) => r.usPerEvent)],
  ].map(([what, xs]) => [what, ...xs.map((x) => (x === null ? '–' : `${x.toFixed(2)}×`)), median(xs) === null ? '–' : `**${median(xs).toFixed(2)}×**`]);

  // Whether anything besides this run held the cores when it started.
  const loadedAtStart = startLoad[0] >= cpus().length;
  const lines = [
    '# streamgate against a fastify + BullMQ + undici relay, end to end (bench/peer-ab.mjs)',
    '',
    `- date: ${new Date().toISOString()}; ${cpus().length} CPUs (${cpus()[0]?.model ?? '?'}); load average at the start ${loadAtStart}, at the end ${loadAtEnd} (1/5/15 min). ${loadedAtStart ? '**A shared, loaded box**: other sessions\' tests and benches ran meanwhile (the "others" column); absolute figures move with them,' : 'A quiet box at the start (1-minute load under the core count); the "others" column shows what else ran;'} the ratios of one run (same minutes, alternating rounds) are what counts.`,
    `- streamgate: this tree's dist/ (${commitOf()}), \`streamgate start\` with every role, threads 1, on node ${process.version}, ${backends.map((b) => (b === 'kafka' ? `with Kafka: a fresh ${PARTITIONS}-partition topic per round (202 after acks=all)` : 'with the embedded log ("streamgate (embedded log)": no KAFKA_BROKERS, LMDB in the node\'s process, the single-machine deployment; a fresh data dir per round; 202 after its synced commit)')).join('; ')}; Postgres, Redis, one queue routed to the receiver; ordered per partition key per target, signed deliveries.`,
    `- peer: bench/peer/relay.mjs, fastify ${versions.fastify} + BullMQ ${versions.bullmq} (ioredis ${versions.ioredis}) + undici ${versions.undici}, one process (HTTP + ${peer.workers ? `${peer.workers} worker process(es)` : 'a BullMQ Worker in the same process'}), worker concurrency ${peer.concurrency}, 10 attempts with exponential backoff, HMAC-SHA256 signature per delivery, removeOnComplete; a fresh relay and Redis key prefix per round, deleted after. 202 once Redis replied to the add; Redis here: ${redisSettings} (shared, not ours to change: an acknowledged job can be lost on a Redis crash, where streamgate's acks=all cannot). **No order per partition key**: open-source BullMQ has none (BullMQ Pro "groups" would give it, at a price); with concurrency ${peer.concurrency} the jobs of one key overlap. The peer gives the weaker guarantee.`,
    ...(values.floor ? [`- floor: bench/peer/floor.mjs, node:http + undici ${versions.undici} in one process, no queue, no log, no retry, no order: it POSTs each event signed (HMAC-SHA256) to the receiver over ${peer.concurrency} keep-alive connections and answers 202 once the receiver said 2xx (so accepted = delivered, and its accept→deliver is negative: it delivers before it answers). The least any one-thread Node relay pays per event here: four loopback socket operations, two HTTP parses, an HMAC. A target above its ev/s is bounded by this box, not by a design.`] : []),
    `- load (all): autocannon in this process, ${options.connections} connections, pipelining 1, ${options.bodyBytes} B JSON bodies, ${options.keys} partition keys (x-service-partition-key), API key header; ${options.warmup} s warm-up (drained) then ${options.duration} s measured; plus a paced probe of ${probeRate} ev/s with "seq":N bodies for accept→deliver (receiver arrival − the moment the 202 was read; first arrival of each seq). Same receiver process (bench/receiver.mjs, tracking on for all). Rounds alternate the systems, each round starting one later (${systems.map((w) => name[w]).join(', ')}; then rotated).`,
    '- columns: accepted ev/s = events the system accepted in the window (Kafka records, or the embedded node\'s streamgate_ingress_accepted_total; the relay\'s counter) / window; delivered in window = distinct events at the receiver by the window\'s end / window; until drained = distinct events / first to last arrival (as bench/run.mjs\'s e2e phase); tail = how long delivery ran on after the load stopped; CPU µs/event = CPU of the system under test (the streamgate process; the relay\'s processes), load start to drained, / distinct delivered; CPU % columns are % of one core over the same span (of 200 on 2 cores): sut = system under test, broker = Kafka, postgres = the server\'s own processes and the backends of this run\'s database, load = this process (autocannon + probe), others = every other process on the box.',
    '',
    table(['system', 'round', 'accepted ev/s', 'delivered ev/s in window', 'delivered ev/s until drained', 'delivered/accepted', 'tail s', 'accept→deliver p50 ms', 'p99 ms', 'CPU µs/delivered event', 'sut %', 'broker %', 'redis %', 'postgres %', 'receiver %', 'load %', 'others %'], rows),
    '',
    ...sgSystems.flatMap((sg) => [
      `## ${name[sg]} / peer, per round and the median of the per-round ratios`,
      '',
      table(['ratio', ...results[sg].map((_, i) => `round ${i + 1}`), 'median'], ratioRowsOf(ratiosOf(sg, 'peer'))),
      '',
    ]),
    ...(sgSystems.length > 1 ? [
      `## ${name[sgSystems[1]]} / ${name[sgSystems[0]]}`,
      '',
      table(['ratio', ...results[sgSystems[0]].map((_, i) => `round ${i + 1}`), 'median'], ratioRowsOf(ratiosOf(sgSystems[1], sgSystems[0]))),
      '',
    ] : []),
    ...(values.floor ? [
      '## the floor / peer: what a one-thread relay doing nothing but relay reaches on this box',
      '',
      table(['ratio', ...results.peer.map((_, i) => `round ${i + 1}`), 'median'], ratioRowsOf(ratiosOf('floor', 'peer'))),
      '',
      ...sgSystems.flatMap((sg) => [
        `## ${name[sg]} / the floor`,
        '',
        table(['ratio', ...results[sg].map((_, i) => `round ${i + 1}`), 'median'], ratioRowsOf(ratiosOf(sg, 'floor'))),
        '',
      ]),
    ] : []),
  ];
  const text = `${lines.join('\n')}\n`;
  await writeFile(values.out, text);
  process.stdout.write(`\n${text}`);
  say(`written ${values.out}`);
}

const fmt = (x) => (x === null || x === undefined ? '–' : x.toFixed(1));

/** Nearest-rank percentiles (ms); null when there are none. */
function percentiles(values) {
  if (!values.length) return null;
  const sorted = Float64Array.from(values).sort();
  const at = (q) => sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)];
  return { count: sorted.length, p50: at(0.5), p99: at(0.99), max: sorted[sorted.length - 1] };
}

/**
 * The Postgres processes of this run: the server's own (postmaster, WAL writer,
 * checkpointer...) and the backends connected to our database, whose CPU is
 * summed as one column. Backends of other databases (other sessions' tests) are
 * left to "others".
 */
function postgresPids(database) {
  const out = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmd = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      // A backend's title: "postgres: <cluster>: <user> <database> <host>(<port>) <state>".
      const backend = /^postgres: [^:]+: \S+ (\S+) (?:\[local\]|\S+\(\d+\))/.exec(cmd);
      if (backend ? backend[1] === database : cmd.startsWith('postgres') || cmd.includes('/bin/postgres')) out.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** The shared Redis's persistence, as found (the bench does not change it). */
async function redisPersistence(url) {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    const get = async (name) => (await redis.config('GET', name))[1];
    return `appendonly ${await get('appendonly')}, appendfsync ${await get('appendfsync')}, save "${await get('save')}"`;
  } catch (err) {
    return `persistence unknown (${err.message})`;
  } finally {
    redis.disconnect();
  }
}

/** Deletes the keys matching `pattern` (the peer's private prefix only). */
async function deleteKeys(url, pattern) {
  const redis = new Redis(url, { maxRetriesPerRequest: 1 });
  try {
    let cursor = '0';
    do {
      const [next, found] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      cursor = next;
      if (found.length) await redis.del(...found);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
  await sleep(0);
}

function peerVersions() {
  const v = (name) => {
    try {
      return JSON.parse(readFileSync(fileURLToPath(new URL(`./peer/node_modules/${name}/package.json`, import.meta.url)), 'utf8')).version;
    } catch {
      return '?';
    }
  };
  return { fastify: v('fastify'), bullmq: v('bullmq'), ioredis: v('ioredis'), undici: v('undici') };
}

function commitOf() {
  try {
    const root = fileURLToPath(new URL('..', import.meta.url));
    const rev = execFileSync('git', ['-C', root, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['-C', root, 'status', '--porcelain', '--', 'src'], { encoding: 'utf8' }).trim();
    return `${rev}${dirty ? ' + uncommitted src/ changes' : ''}`;
  } catch {
    return 'unknown commit';
  }
}

runWithCleanup(main);
