import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { spawnNode } from './children.mjs';
import { tapLogs } from './log-tap.mjs';

/** The compiled CLI: `npm run bench` builds first, so dist/ matches src/. */
const CLI = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));
const run = promisify(execFile);

/**
 * The environment of a bench node on the machine's cluster backends: its
 * database, Kafka topic and consumer group, Redis, a config file, warn-level
 * logs. `base` is the environment it starts from (process.env by default).
 */
export function clusterEnv({ databaseUrl, brokers, topic, group, configFile, base = process.env, extra = {} }) {
  return {
    ...base,
    ...extra,
    DATABASE_URL: databaseUrl,
    REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    KAFKA_BROKERS: brokers.join(','),
    LOG_LEVEL: 'warn',
    STREAMGATE_KAFKA_TOPIC: topic,
    STREAMGATE_KAFKA_GROUP: group,
    STREAMGATE_CONFIG: configFile,
  };
}

/** `streamgate admin bootstrap --json`: a license, a workspace and its two keys. */
export async function bootstrapTenant(env) {
  try {
    const { stdout } = await run(process.execPath, [CLI, 'admin', 'bootstrap', '--email', 'bench@example.com', '--json'], {
      env,
      timeout: 60_000,
    });
    return JSON.parse(stdout.trim().split('\n').pop());
  } catch (err) {
    // execFile's message is only the command line; what went wrong is on stderr.
    if (err.stderr) err.message += `\n${err.stderr.trim().split('\n').slice(0, 10).join('\n')}`;
    throw err;
  }
}

/**
 * Starts `streamgate start` as a child and resolves once GET /readyz says 200.
 * Rejects (with the log file's name) if it exits or is not ready in time.
 */
export async function startStreamgate({ name, env, port, roles, threads = 1, logFile, nodeArgs = [], timeoutMs = 60_000, cli = CLI, node = process.execPath, startFlags = null }) {
  // nodeArgs: e.g. ['--cpu-prof'] when digging into a slow phase (not allowed in NODE_OPTIONS).
  // `--threads` only when it is not 1 (today's behaviour), so builds whose CLI
  // does not know the flag still run every single-thread phase.
  // cli: another build's dist/cli.js, for an A/B of two builds in one run (bench/cpu-ab.mjs, bench/server-ab.mjs);
  // node: the node binary that runs it (an older build may need an older Node).
  // The heap cap and young generation `npm start` gives each thread (config/start.sh), so the bench
  // measures what users run.
  const heapMb = process.env.STREAMGATE_MAX_HEAP_MB ?? '256';
  const semiMb = process.env.STREAMGATE_SEMI_SPACE_MB ?? '32';
  const growingPercent = process.env.STREAMGATE_HEAP_GROWING_PERCENT ?? '100';
  const pretenuring = process.env.STREAMGATE_PRETENURING ?? '0';
  // startFlags: instead of these, e.g. what an older build's start.sh passed (bench/server-ab.mjs).
  const heap = startFlags ?? [
    ...(heapMb === '0' ? [] : [`--max-old-space-size=${heapMb}`]),
    ...(semiMb === '0' ? [] : [`--max-semi-space-size=${semiMb}`]),
    ...(growingPercent === '0' ? [] : [`--heap-growing-percent=${growingPercent}`]),
    ...(pretenuring === '0' ? ['--no-allocation-site-pretenuring'] : []),
  ];
  const args = [...heap, ...nodeArgs, cli, 'start', ...(roles ? ['--roles', roles.join(',')] : []), ...(threads !== 1 ? ['--threads', String(threads)] : [])];
  const startedAt = performance.now();
  // STREAMGATE_THREADS too (unless the caller set it): the config's default (server.threads 0) is
  // as many threads as cores, so without it a `threads 1` phase would run a threaded node. A build
  // that does not know the variable ignores it.
  const child = spawnNode(name, args, { node, env: { ...env, PORT: String(port), STREAMGATE_THREADS: env.STREAMGATE_THREADS ?? String(threads) } });
  const logs = tapLogs(child, logFile);
  const base = `http://127.0.0.1:${port}`;
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (child.exitCode !== null || child.signalCode !== null) break;
    try {
      const res = await fetch(`${base}/readyz`, { signal: AbortSignal.timeout(1_000) });
      await res.arrayBuffer();
      if (res.status === 200) return { child, logs, base, readyMs: Math.round(performance.now() - startedAt) };
    } catch {
      // not listening yet
    }
    await sleep(100);
  }
  child.kill('SIGKILL');
  await sleep(100); // the last stderr lines of an exited child may still be on their way to the tap
  if (threads !== 1 && logs.problems().some((p) => /unknown option '--threads'/i.test(p.example))) {
    throw Object.assign(new Error(`this build of streamgate has no --threads option (${name})`), { unsupported: true });
  }
  throw new Error(`${name} did not become ready (exit ${child.exitCode ?? child.signalCode ?? 'none'}); see ${logFile}`);
}

/**
 * One queue routed to one target, through the configuration API, as an
 * operator would do it. Returns the ingress path for that queue.
 */
export async function configureRoute({ base, creds, queue, target, targetUrl }) {
  const headers = {
    'x-api-key': creds.buildKey,
    'x-license-publicid': creds.licensePublicId,
    'content-type': 'application/json',
  };
  const tenant = encodeURIComponent(creds.tenantPublicId);
  const put = async (path, body) => {
    const res = await fetch(`${base}/v1/tenants/${tenant}${path}`, { method: 'PUT', headers, body });
    const text = await res.text();
    if (res.status !== 200 && res.status !== 201) throw new Error(`PUT ${path} answered ${res.status}: ${text}`);
  };
  await put(`/queues/${queue}`, '{}');
  await put(`/targets/${target}`, JSON.stringify({ url: targetUrl }));
  await put(`/queues/${queue}/targets/${target}`, undefined);
  return `/events/${tenant}/${queue}`;
}
