import { parseArgs } from 'node:util';

/**
 * Bench settings from argv (`npm run bench -- --duration 5`) or the
 * environment (`BENCH_DURATION=5 npm run bench`); argv wins. Defaults keep a
 * whole run (baseline + both backends) under about two minutes on the 2-core dev box.
 */
const SPEC = {
  // seconds of measured load per phase (baseline and each streamgate backend alike)
  duration: { env: 'BENCH_DURATION', def: 10, min: 1 },
  connections: { env: 'BENCH_CONNECTIONS', def: 50, min: 1 },
  // >1 stalls streamgate: uWS cannot answer pipelined requests asynchronously (see lib/findings.mjs)
  pipelining: { env: 'BENCH_PIPELINING', def: 1, min: 1 },
  // event body size in bytes (a JSON document padded to exactly this size)
  bodyBytes: { env: 'BENCH_BODY_BYTES', def: 1024, min: 16 },
  // distinct X-Service-Partition-Key values, so partitions and delivery lanes are all used
  keys: { env: 'BENCH_KEYS', def: 1000, min: 1 },
  // unmeasured load before each measured phase: JIT, caches, producer metadata, pooled sockets
  warmup: { env: 'BENCH_WARMUP', def: 2, min: 0 },
  // how long to wait for delivery to catch up before giving up (seconds, per wait)
  drainTimeout: { env: 'BENCH_DRAIN_TIMEOUT', def: 60, min: 1 },
};

/** Which event log(s) streamgate runs on; `both` measures them one after the other in one run. */
const BACKEND = { env: 'BENCH_BACKEND', def: 'both', choices: { kafka: ['kafka'], embedded: ['embedded'], both: ['kafka', 'embedded'] } };

export function readOptions(argv = process.argv.slice(2), env = process.env) {
  const { values } = parseArgs({
    args: argv,
    options: Object.fromEntries([...Object.keys(SPEC), 'backend'].map((name) => [name, { type: 'string' }])),
    strict: true,
  });
  const out = {};
  for (const [name, { env: envName, def, min }] of Object.entries(SPEC)) {
    const raw = values[name] ?? env[envName];
    const value = raw === undefined || raw === '' ? def : Number(raw);
    if (!Number.isInteger(value) || value < min) {
      throw new Error(`--${name} / ${envName} must be an integer >= ${min} (got ${JSON.stringify(raw)})`);
    }
    out[name] = value;
  }
  const raw = values.backend ?? env[BACKEND.env];
  const backend = raw === undefined || raw === '' ? BACKEND.def : raw;
  if (!Object.hasOwn(BACKEND.choices, backend)) {
    throw new Error(`--backend / ${BACKEND.env} must be one of ${Object.keys(BACKEND.choices).join('|')} (got ${JSON.stringify(raw)})`);
  }
  out.backend = backend;
  // in run order
  out.backends = BACKEND.choices[backend];
  return out;
}
