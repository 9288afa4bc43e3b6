import { availableParallelism } from 'node:os';
import { parseArgs } from 'node:util';

/**
 * Bench settings from argv (`npm run bench -- --duration 5`) or the
 * environment (`BENCH_DURATION=5 npm run bench`); argv wins. BENCH_QUICK=1
 * (or --quick) changes the defaults to a smoke run: a few seconds per phase
 * and a 20k backlog, to check the bench works, not to quote its figures.
 */
const SPEC = {
  // seconds of measured load per load phase (baseline, ingress-only, end-to-end)
  duration: { env: 'BENCH_DURATION', def: 10, quick: 3, min: 1 },
  connections: { env: 'BENCH_CONNECTIONS', def: 50, min: 1 },
  // requests a connection sends before reading answers; streamgate answers them in order, one dispatched at a time (src/http/connection.ts)
  pipelining: { env: 'BENCH_PIPELINING', def: 1, min: 1 },
  // requests/s in total (autocannon overallRate); 0 = as fast as answers come. A fixed rate makes CPU per
  // event comparable between builds on a busy box: fixed per-second costs are spread over the same count
  rate: { env: 'BENCH_RATE', def: 0, min: 0 },
  // event body size in bytes (a JSON document padded to exactly this size)
  bodyBytes: { env: 'BENCH_BODY_BYTES', def: 1024, min: 16 },
  // distinct X-Service-Partition-Key values, so partitions and delivery lanes are all used
  keys: { env: 'BENCH_KEYS', def: 1000, min: 1 },
  // unmeasured load before each measured phase: JIT, caches, producer metadata, pooled sockets
  warmup: { env: 'BENCH_WARMUP', def: 2, quick: 1, min: 0 },
  // how long to wait for delivery to catch up before giving up (seconds, per wait)
  drainTimeout: { env: 'BENCH_DRAIN_TIMEOUT', def: 60, quick: 20, min: 1 },
  // events appended to the topic before each backlog drain
  backlogEvents: { env: 'BENCH_BACKLOG_EVENTS', def: 200_000, quick: 20_000, min: 1 },
  // seconds a backlog drain is watched at most (a 200 ms receiver may not finish)
  backlogObserve: { env: 'BENCH_BACKLOG_OBSERVE', def: 90, quick: 10, min: 1 },
  // events/s of the latency phase's paced load; 0 = half the delivered ev/s of the end-to-end phase at the
  // default thread count in the same run (issue 15: accept→deliver p99 "at half that rate")
  latencyRate: { env: 'BENCH_LATENCY_RATE', def: 0, min: 0 },
};

/** Comma-separated lists: node thread counts and receiver latencies. */
const LISTS = {
  // `streamgate start --threads N` for the ingress-only and end-to-end phases
  threads: { env: 'BENCH_THREADS', def: () => [...new Set([1, availableParallelism()])], min: 1 },
  // receiver answer delay of each backlog drain, ms
  receiverDelays: { env: 'BENCH_RECEIVER_DELAYS', def: () => [0, 50, 200], min: 0 },
};

/** Phases that can be left out (`--skip backlog,baseline`), for a run that digs into one. */
const PHASES = ['baseline', 'ingress', 'end-to-end', 'latency', 'backlog'];

export function readOptions(argv = process.argv.slice(2), env = process.env) {
  const { values } = parseArgs({
    args: argv,
    options: Object.fromEntries([
      ...[...Object.keys(SPEC), ...Object.keys(LISTS), 'skip', 'profile', 'backend'].map((name) => [name, { type: 'string' }]),
      ['quick', { type: 'boolean' }],
    ]),
    strict: true,
  });
  const quick = values.quick ?? env.BENCH_QUICK === '1';
  const out = { quick };
  for (const [name, { env: envName, def, quick: quickDef, min }] of Object.entries(SPEC)) {
    const raw = values[name] ?? env[envName];
    const value = raw === undefined || raw === '' ? (quick && quickDef !== undefined ? quickDef : def) : Number(raw);
    if (!Number.isInteger(value) || value < min) {
      throw new Error(`--${name} / ${envName} must be an integer >= ${min} (got ${JSON.stringify(raw)})`);
    }
    out[name] = value;
  }
  for (const [name, { env: envName, def, min }] of Object.entries(LISTS)) {
    const raw = values[name] ?? env[envName];
    const list = raw === undefined || raw === '' ? def() : raw.split(',').map((s) => Number(s.trim()));
    if (!list.length || list.some((n) => !Number.isInteger(n) || n < min)) {
      throw new Error(`--${name} / ${envName} must be a comma-separated list of integers >= ${min} (got ${JSON.stringify(raw)})`);
    }
    out[name] = list;
  }
  const skip = (values.skip ?? env.BENCH_SKIP ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  const unknown = skip.filter((p) => !PHASES.includes(p));
  if (unknown.length) throw new Error(`--skip / BENCH_SKIP: unknown phase(s) ${unknown.join(', ')} (phases: ${PHASES.join(', ')})`);
  out.phases = PHASES.filter((p) => !skip.includes(p));
  // BENCH_PROFILE=1: every streamgate node runs under --cpu-prof (figures then include the profiler's cost)
  out.profile = (values.profile ?? env.BENCH_PROFILE) === '1';
  // BENCH_BACKEND=embedded: the end-to-end and latency phases run on the embedded log (no KAFKA_BROKERS: LMDB
  // in the node's process, the single-machine deployment) instead of a Kafka topic; the other phases stay on Kafka
  out.backend = values.backend ?? env.BENCH_BACKEND ?? 'kafka';
  if (out.backend !== 'kafka' && out.backend !== 'embedded') throw new Error(`--backend / BENCH_BACKEND must be kafka or embedded (got ${JSON.stringify(out.backend)})`);
  return out;
}
