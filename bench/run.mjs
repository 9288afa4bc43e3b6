/**
 * `npm run bench`: ingress throughput of streamgate against a bare
 * uWebSockets.js baseline, then delivery throughput, for one or both event-log
 * backends, in ONE run so that every ratio compares measurements taken minutes
 * apart on the same (noisy) machine rather than on different days.
 *
 *   baseline      autocannon ──► bare-server.mjs (202 at once), once per run
 *   per backend   (kafka: Kafka topic + Redis; embedded: LMDB log + in-process cache)
 *     ingress     autocannon ──► streamgate ──► event log (fresh topic / data dir, fresh DB)
 *     delivery    streamgate ──► receiver.mjs, timed until every event arrived
 *     replay      fresh `--roles delivery` node, new group, no ingress load
 *
 * Options: see lib/options.mjs (argv or BENCH_* env; --backend kafka|embedded|both).
 * Results: console and bench/results.md. Children are killed, databases
 * dropped, topics deleted and data folders removed on every exit path (lib/cleanup.mjs).
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readOptions } from './lib/options.mjs';
import { cleanupStarted, onCleanup, runWithCleanup } from './lib/cleanup.mjs';
import { snapshot, stopChild, stopStartedSince } from './lib/children.mjs';
import { createBenchDatabase, dropBenchDatabase } from './lib/bench-db.mjs';
import { bootstrapTenant } from './lib/streamgate.mjs';
import { startReceiver } from './lib/receiver-client.mjs';
import { makeBody, makeRequests, runLoad } from './lib/load.mjs';
import { backendObservations, baselineObservations } from './lib/findings.mjs';
import { renderReport, writeReport } from './lib/report.mjs';
import { say } from './lib/say.mjs';
import { kafkaBackend } from './backends/kafka.mjs';
import { embeddedBackend } from './backends/embedded.mjs';
import { baselinePhase } from './phases/baseline.mjs';
import { ingressPhase } from './phases/ingress.mjs';
import { replayPhase } from './phases/replay.mjs';

const RESULTS = fileURLToPath(new URL('./results.md', import.meta.url));
const QUEUE = 'bench';
const BACKENDS = { kafka: kafkaBackend, embedded: embeddedBackend };

async function main() {
  const options = readOptions();
  const runId = `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
  const workDir = await mkdtemp(join(tmpdir(), 'sg-bench-'));
  say(`run ${runId}; backends ${options.backends.join(', ')}; logs in ${workDir}`);

  // Every backend is set up before anything is measured: its own database,
  // log (topic or data folder), groups and cache, and a bootstrapped tenant.
  const backends = [];
  for (const name of options.backends) backends.push(await prepareBackend(name, { runId, workDir, options }));

  // Same path shape, key header, partition keys and body as streamgate gets
  // (the first backend's tenant), so the only difference is the server behind the port.
  const baseline = await baselinePhase({ options, load: loader(backends[0].requests, options) });

  const measured = [];
  for (const backend of backends) measured.push(await measureBackend(backend, { options, workDir, baseline }));

  const text = renderReport({
    date: new Date().toISOString(),
    node: process.version,
    platform: `${process.platform}/${process.arch}`,
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model ?? '?',
    options,
    baseline,
    notes: baselineObservations({ options, baseline }),
    backends: measured,
  });
  process.stdout.write(`\n${text}`);
  await writeReport(RESULTS, text);
  say(`written ${RESULTS}`);
  const failed = measured.filter((b) => b.error).map((b) => b.name);
  if (failed.length) throw new Error(`backend(s) failed: ${failed.join(', ')} (see the report)`);
}

/** Backend-specific env on top of the common one, a fresh database, a tenant and its requests. */
async function prepareBackend(name, { runId, workDir, options }) {
  const backend = BACKENDS[name]({ runId, workDir });
  const db = await createBenchDatabase(`${runId}_${name}`);
  onCleanup(() => dropBenchDatabase(db.name));
  const configFile = join(workDir, `streamgate-${name}.yaml`);
  await writeFile(configFile, backend.configYaml);
  backend.env = {
    ...process.env,
    DATABASE_URL: db.url,
    STREAMGATE_ALLOW_NETWORKS: '127.0.0.0/8',
    LOG_LEVEL: 'warn',
    STREAMGATE_CONFIG: configFile,
    ...backend.env,
  };
  backend.creds = await bootstrapTenant(backend.env);
  backend.requests = makeRequests({
    path: `/events/${encodeURIComponent(backend.creds.tenantPublicId)}/${QUEUE}`,
    headers: { 'content-type': 'application/json', 'x-api-key': backend.creds.ingressKey },
    body: makeBody(options.bodyBytes),
    keys: options.keys,
  });
  return backend;
}

const loader = (requests, options) => (port, duration) =>
  runLoad({ url: `http://127.0.0.1:${port}`, requests, duration, connections: options.connections, pipelining: options.pipelining });

/**
 * Ingress + delivery, then the delivery-only replay, on one backend. A failure
 * is reported in that backend's row (its children stopped) so the other
 * backend's figures still make it into the report.
 */
async function measureBackend(backend, { options, workDir, baseline }) {
  const { name, title, logLabel } = backend;
  const started = snapshot();
  try {
    const receiver = await startReceiver({ bodyBytes: options.bodyBytes });
    const ingress = await ingressPhase({ backend, options, load: loader(backend.requests, options), receiver, workDir });
    const replay = await replayPhase({ backend, options, receiver, workDir, total: ingress.total });
    await stopChild(receiver.child);
    // Both nodes have stopped: what each group committed is final.
    const uncommitted = {};
    for (const [who, group] of [['first node', backend.groups.first], ['delivery-only node', backend.groups.replay]]) {
      uncommitted[`${who} (group ${group})`] = await backend.uncommitted(group).catch(() => null);
    }
    const r = {
      name,
      title,
      logLabel,
      streamgate: ingress.streamgate,
      ratio: baseline.acceptedPerS > 0 ? ingress.streamgate.acceptedPerS / baseline.acceptedPerS : 0,
      expected: ingress.expected,
      delivery: ingress.delivery,
      deliveryOnly: replay.deliveryOnly,
    };
    r.notes = [
      ...ingress.notes,
      ...(await backend.notes()),
      ...backendObservations({
        ...r,
        options,
        shutdown: ingress.shutdown,
        replayShutdown: replay.shutdown,
        uncommitted,
        logs: [ingress.logs, replay.logs],
        readyMs: [ingress.readyMs, replay.readyMs],
      }),
    ];
    return r;
  } catch (err) {
    // Interrupted (Ctrl-C): no report from a half-torn-down run.
    if (cleanupStarted()) throw err;
    say(`${name}: FAILED: ${err.stack ?? err}`);
    await stopStartedSince(started);
    return { name, title, error: err.message, notes: [`logs in ${workDir}`] };
  }
}

runWithCleanup(main);
