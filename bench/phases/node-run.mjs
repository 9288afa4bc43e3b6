import { join } from 'node:path';
import { stopChild } from '../lib/children.mjs';
import { freePort } from '../lib/ports.mjs';
import { startStreamgate } from '../lib/streamgate.mjs';
import { say } from '../lib/say.mjs';

/**
 * Runs `body(sg)` against a streamgate node started for one phase, and stops
 * the node afterwards whatever happens. A build without `--threads` turns the
 * phase into a skipped row instead of failing the run (the threaded node is
 * being built in parallel; every `--threads 1` phase runs on any build).
 */
export async function withNode(ctx, { label, env, roles, threads }, body) {
  // BENCH_NODE_ARGS: extra Node options for every streamgate node of the run (e.g. --trace-gc: its lines go to the phase's log).
  const extra = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const nodeArgs = [...extra, ...(ctx.options.profile ? ['--cpu-prof', `--cpu-prof-dir=${join(ctx.workDir, 'profiles', label)}`] : [])];
  let sg;
  try {
    sg = await startStreamgate({
      name: label, env: { ...ctx.env, ...env }, port: await freePort(), roles, threads, nodeArgs, cli: ctx.cli, node: ctx.node,
      logFile: join(ctx.workDir, `${label}.log`),
    });
  } catch (err) {
    if (!err.unsupported) throw err;
    say(`${label}: skipped (${err.message})`);
    return { label, threads, skipped: err.message };
  }
  let result;
  try {
    result = await body(sg);
  } finally {
    const shutdown = await stopChild(sg.child, 30_000);
    if (shutdown.killed || shutdown.code !== 0) say(`${label}: exit ${shutdown.signal ?? shutdown.code} after ${shutdown.ms} ms${shutdown.killed ? ' (killed)' : ''}`);
    if (result) result.shutdown = shutdown;
  }
  result.readyMs = sg.readyMs;
  // The CLI's banner goes to stderr; anything else there or at warn/error level is worth a look.
  result.problems = sg.logs.problems().filter((p) => !p.key.includes('serving on port'));
  result.logFile = sg.logs.file;
  return result;
}
