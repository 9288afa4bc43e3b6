import { availableParallelism } from 'node:os';
import { findPid, startCpuMeter } from '../lib/cpu.mjs';
import { benchLog } from '../lib/phase-log.mjs';
import { logBatching, produceCounts, startNodeMeter, startRateSampler, tickSeries } from '../lib/node-meter.mjs';
import { summarizeDelivery } from '../lib/findings.mjs';
import { now, say } from '../lib/say.mjs';
import { withNode } from './node-run.mjs';

/**
 * (b) End to end: one node with every role (ingress, delivery, management)
 * and `threads` threads, on a fresh topic, delivering to the local receiver
 * while autocannon loads its ingress:
 *
 *   autocannon ──► streamgate ──► Kafka ──► streamgate ──► receiver
 *                  (BENCH_BACKEND=embedded: the embedded log in the node's process)
 *
 * Measured from the start of the load until the receiver holds every event
 * the load added to the topic. CPU per delivered event covers the node's
 * whole work for that event: accepting, logging, reading back, delivering.
 */
export async function endToEndPhase(ctx, threads) {
  const label = `e2e-t${threads}${ctx.labelSuffix ? `-${ctx.labelSuffix}` : ''}`;
  const log = benchLog(ctx, label);
  await log.prepare();
  const { options, receiver } = ctx;
  const drainMs = options.drainTimeout * 1000;
  say(`${label}: all roles, --threads ${threads}`);
  return withNode(ctx, { label, env: log.env(), threads }, async (sg) => {
    const port = new URL(sg.base).port;
    const notes = [];
    await receiver.setDelay(0);
    if (options.warmup) {
      await ctx.load(port, options.warmup);
      const logged = await log.countEvents(sg.base);
      const drained = await receiver.waitForUnique(logged, drainMs);
      if (!drained.complete) notes.push(`warm-up: only ${drained.unique}/${logged} events delivered before the timeout; figures are skewed`);
    }
    await receiver.reset();
    const before = await log.countEvents(sg.base);

    const ticks = tickSeries();
    const counts0 = await produceCounts(sg.base).catch(() => null);
    const meter = startNodeMeter(sg.child.pid);
    // Where the machine's cores go meanwhile: on a 2-core box the broker, the load generator and the
    // receiver share them with streamgate, which bounds what streamgate can get.
    const processes = Object.fromEntries(
      Object.entries({ streamgate: sg.child.pid, broker: findPid('kafka.Kafka'), load: process.pid, receiver: receiver.child?.pid ?? null, redis: findPid('redis-server') })
        .filter(([, pid]) => pid !== null),
    );
    const cores = startCpuMeter(processes);
    const sampler = startRateSampler(async () => (await receiver.stats()).unique);
    const loadStart = now();
    const load = await ctx.load(port, options.duration, ticks.onTick);
    const loadEnd = now();
    const expected = (await log.countEvents(sg.base)) - before;
    const seen = await receiver.waitForUnique(expected, drainMs, { onProgress: (s) => say(`   ${s.unique}/${expected}`) });
    const series = sampler();
    const node = meter(seen.unique);
    Object.assign(node, logBatching(counts0, await produceCounts(sg.base).catch(() => null)));
    const cpu = cores();
    const delivery = summarizeDelivery(seen, expected, { startRef: loadStart, tailRef: loadEnd });
    say(`   accepted ${Math.round(load.acceptedPerS)} ev/s, delivered ${Math.round(delivery.perS ?? 0)} ev/s (${seen.unique}/${expected}), ${node.cpuUsPerEvent?.toFixed(0)} µs CPU/event; records per produce request ${node.recordsPerProduce?.toFixed(1) ?? '–'}, per fetch answer ${node.recordsPerFetch?.toFixed(1) ?? '–'}`);
    say(`   CPU, % of one core: ${Object.entries(cpu).map(([k, v]) => `${k} ${v}`).join(', ')} (of ${availableParallelism() * 100})`);
    return { kind: 'e2e', label, threads, load, delivery, node, cpu, cores: availableParallelism(), series, ingressSeries: ticks.series, notes };
  });
}
