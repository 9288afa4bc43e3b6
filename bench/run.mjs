/**
 * `npm run bench`: what users compare, in ONE run, so that every ratio
 * compares measurements taken minutes apart on the same (noisy) machine:
 *
 *   baseline      autocannon ──► bare-server.mjs (202 at once): node:http, then streamgate's own
 *                 HttpServer with a trivial dispatch (our parser against node:http at the floor)
 *   (a) ingress   autocannon ──► streamgate --roles ingress ──► Kafka       per thread count
 *   (b) e2e       autocannon ──► streamgate (all roles) ──► Kafka ──► receiver   per thread count
 *   (b2) latency  paced load at half (b)'s delivered ev/s ──► the same path: accept→deliver percentiles
 *   (c) backlog   Kafka (N events already there) ──► streamgate --roles delivery ──► receiver
 *                 answering after 0, 50, 200 ms
 *   (d) every phase: streamgate CPU µs per event (/proc/<pid>/stat) and peak RSS
 *
 * Thread counts (`--threads 1,2`, default 1 and the cores this process may
 * use) are passed to `streamgate start --threads N`; a build without that
 * flag shows those phases as skipped. Options: lib/options.mjs (argv or
 * BENCH_*; BENCH_QUICK=1 for a smoke run). Results: console,
 * bench/results/results.md and the chart bench/results/results.svg. Children are killed,
 * the database dropped and topics deleted on every exit path (lib/cleanup.mjs).
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readOptions } from './lib/options.mjs';
import { runWithCleanup } from './lib/cleanup.mjs';
import { stopChild } from './lib/children.mjs';
import { prepareBench } from './lib/bench-context.mjs';
import { baselineObservations, phaseObservations } from './lib/findings.mjs';
import { renderChart, renderReport, writeReport } from './lib/report.mjs';
import { say } from './lib/say.mjs';
import { baselinePhase } from './phases/baseline.mjs';
import { ingressOnlyPhase } from './phases/ingress-only.mjs';
import { endToEndPhase } from './phases/end-to-end.mjs';
import { latencyPhase, latencyTarget } from './phases/latency.mjs';
import { backlogPhases } from './phases/backlog.mjs';

const RESULTS = fileURLToPath(new URL('./results/results.md', import.meta.url));
const CHART = fileURLToPath(new URL('./results/results.svg', import.meta.url));

async function main() {
  const options = readOptions();
  const runId = `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
  const workDir = await mkdtemp(join(tmpdir(), 'sg-bench-'));
  say(`run ${runId}; phases ${options.phases.join(', ')}; threads ${options.threads.join(', ')}${options.quick ? '; QUICK' : ''}; logs in ${workDir}`);
  const ctx = await prepareBench({ runId, workDir, options });
  const has = (phase) => options.phases.includes(phase);

  const baseline = has('baseline') ? await baselinePhase({ options, load: ctx.load }) : null;
  const safely = async (label, threads, run) => {
    try {
      return await run();
    } catch (err) {
      say(`${label}: FAILED: ${err.stack ?? err}`);
      return { label, threads, error: err.message };
    }
  };
  const ingress = [];
  if (has('ingress')) for (const n of options.threads) ingress.push(await safely(`ingress-t${n}`, n, () => ingressOnlyPhase(ctx, n)));
  const e2e = [];
  if (has('end-to-end')) for (const n of options.threads) e2e.push(await safely(`e2e-t${n}`, n, () => endToEndPhase(ctx, n)));
  const latencyThreads = latencyTarget(options, e2e).threads;
  const latency = has('latency') ? [await safely(`latency-t${latencyThreads}`, latencyThreads, () => latencyPhase(ctx, e2e))] : [];
  // The backlog drains run at the largest thread count this build accepts.
  // (Those phases skipped: the largest asked for.)
  const ran = [...ingress, ...e2e].filter((x) => !x.skipped && !x.error).map((x) => x.threads);
  const backlogThreads = Math.max(1, ...(ran.length > 0 || ingress.length + e2e.length > 0 ? ran : options.threads));
  const backlog = has('backlog') ? await safely('backlog', backlogThreads, () => backlogPhases(ctx, backlogThreads)) : [];
  await stopChild(ctx.receiver.child);

  const results = { ingress, e2e, latency, backlog: Array.isArray(backlog) ? backlog : [backlog] };
  const phases = [...results.ingress, ...results.e2e, ...results.latency, ...results.backlog];
  for (const x of phases) x.observations = phaseObservations(x, options);
  const report = {
    date: new Date().toISOString(),
    node: process.version,
    platform: `${process.platform}/${process.arch}`,
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model ?? '?',
    build: buildLabel(),
    options,
    baseline,
    notes: baseline ? baselineObservations({ options, baseline }) : [],
    ...results,
  };
  const text = renderReport(report);
  process.stdout.write(`\n${text}`);
  await writeReport(RESULTS, text);
  await writeFile(CHART, renderChart(report));
  say(`written ${RESULTS} and ${CHART}`);
  const failed = phases.filter((x) => x.error).map((x) => x.label);
  if (failed.length) throw new Error(`phase(s) failed: ${failed.join(', ')} (see the report)`);
}

/** The commit the measured dist/ was built from (npm run bench builds first). */
function buildLabel() {
  try {
    const rev = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--', 'src'], { encoding: 'utf8' }).trim() ? ' + uncommitted src/ changes' : '';
    return `build of ${rev}${dirty}`;
  } catch {
    return 'build of an unknown commit';
  }
}

runWithCleanup(main);
