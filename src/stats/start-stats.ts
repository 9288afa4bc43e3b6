import type { NodeContext } from '../node/node-context.js';
import { RollupRepo } from './rollup-repo.js';
import { StatsRecorder } from './stats-recorder.js';

/** How often a process adds what it counted to the rollups: the overview's charts lag by about this much. */
export const STATS_FLUSH_MS = 1_000;

/**
 * Starts counting this process's traffic into the rollups (ingress: accepted
 * events; delivery: attempts and their outcomes); null on a process with
 * neither role. The returned function stops and writes what is left.
 */
export function startStats(ctx: NodeContext): (() => Promise<void>) | null {
  const ingress = ctx.config.roles.includes('ingress');
  const delivery = ctx.config.roles.includes('delivery');
  if (!ingress && !delivery) return null;
  const recorder = new StatsRecorder(new RollupRepo(ctx.backgroundSql), { flushMs: STATS_FLUSH_MS, ingress, delivery }, ctx.log.child({ component: 'stats' }));
  recorder.start();
  return () => recorder.stop();
}
