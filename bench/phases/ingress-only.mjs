import { PARTITIONS, phaseLog } from '../lib/phase-log.mjs';
import { logBatching, produceCounts, startNodeMeter, tickSeries } from '../lib/node-meter.mjs';
import { say } from '../lib/say.mjs';
import { withNode } from './node-run.mjs';

/**
 * (a) Ingress alone: a `--roles ingress` node with `threads` threads on a
 * fresh topic, under autocannon. Accepted events/s (2xx only), latency of the
 * 202, and the node's CPU per accepted event. Nothing delivers: the records
 * stay in the topic, deleted at cleanup.
 */
export async function ingressOnlyPhase(ctx, threads) {
  const label = `ingress-t${threads}`;
  const log = phaseLog({ runId: ctx.runId, brokers: ctx.brokers, label });
  // Made here, as an operator would before starting nodes: a node that creates it itself reports it missing to readiness first.
  await log.admin.createTopic(log.topic, PARTITIONS);
  say(`${label}: ingress only, --threads ${threads}`);
  return withNode(ctx, { label, env: log.env(), roles: ['ingress'], threads }, async (sg) => {
    const port = new URL(sg.base).port;
    if (ctx.options.warmup) await ctx.load(port, ctx.options.warmup);
    const ticks = tickSeries();
    const produced0 = await produceCounts(sg.base).catch(() => null);
    const meter = startNodeMeter(sg.child.pid);
    const load = await ctx.load(port, ctx.options.duration, ticks.onTick);
    const node = meter(load.accepted);
    node.recordsPerProduce = logBatching(produced0, await produceCounts(sg.base).catch(() => null)).recordsPerProduce;
    say(`   ${Math.round(load.acceptedPerS)} ev/s, p99 ${load.p99} ms, ${node.cpuUsPerEvent?.toFixed(0)} µs CPU/event, ${node.recordsPerProduce?.toFixed(1)} records per produce request, context switches per event ${node.switchesPerEvent?.voluntary.toFixed(2)} voluntary / ${node.switchesPerEvent?.involuntary.toFixed(2)} involuntary`);
    return { kind: 'ingress', label, threads, load, node, series: ticks.series };
  });
}
