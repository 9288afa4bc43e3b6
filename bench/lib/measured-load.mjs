import { startCpuMeter } from './cpu.mjs';

/**
 * One measured phase: `options.warmup` seconds of unmeasured load, then
 * `options.duration` seconds with the CPU of `pids` ({ label: pid }) metered.
 * `run(seconds)` runs the load and resolves with its result; the CPU figures
 * land on the result as `cpu`.
 */
export async function measuredLoad(run, options, pids) {
  if (options.warmup) await run(options.warmup);
  const meter = startCpuMeter(pids);
  const result = await run(options.duration);
  result.cpu = meter();
  return result;
}
