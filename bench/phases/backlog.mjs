import { randomBytes } from 'node:crypto';
import { PARTITIONS, phaseLog } from '../lib/phase-log.mjs';
import { appendBacklog, queueIds } from '../lib/backlog-append.mjs';
import { startMemorySampler, startNodeMeter, startRateSampler } from '../lib/node-meter.mjs';
import { setTimeout as sleep } from 'node:timers/promises';
import { say } from '../lib/say.mjs';
import { withNode } from './node-run.mjs';


/**
 * (c) A backlog drained: `options.backlogEvents` records (1 KB, `options.keys`
 * keys) appended once to a fresh topic, then for each receiver latency a
 * fresh `--roles delivery` node with its own consumer group replays the whole
 * topic against the receiver answering after that many ms. Watched until
 * every event arrived or `options.backlogObserve` seconds passed (a slow
 * receiver may not finish: the rate so far is the figure then).
 */
export async function backlogPhases(ctx, threads) {
  const { options, receiver } = ctx;
  const log = phaseLog({ runId: ctx.runId, brokers: ctx.brokers, label: 'backlog' });
  await log.admin.createTopic(log.topic, PARTITIONS);
  say(`backlog: appending ${options.backlogEvents} events to ${log.topic}`);
  const queue = await queueIds(ctx.env.DATABASE_URL, ctx.queue);
  await appendBacklog({
    brokers: ctx.brokers, topic: log.topic, events: options.backlogEvents, keys: options.keys, bodyBytes: options.bodyBytes,
    tenantPublicId: ctx.creds.tenantPublicId, queue, queueName: ctx.queue, idPrefix: `bl${randomBytes(4).toString('hex')}`,
  });
  const total = await log.countEvents();
  const results = [];
  for (const delayMs of options.receiverDelays) {
    const label = `backlog-${delayMs}ms`;
    say(`${label}: draining ${total} events, receiver answers after ${delayMs} ms, --threads ${threads}`);
    await receiver.setDelay(delayMs);
    await receiver.reset();
    results.push(await withNode(ctx, { label, env: log.env(`${delayMs}ms`), roles: ['delivery'], threads }, async (sg) => {
      const meter = startNodeMeter(sg.child.pid);
      const memory = startMemorySampler(sg.base);
      const sampler = startRateSampler(async () => (await receiver.stats()).unique);
      const until = performance.now() + options.backlogObserve * 1000;
      let stats = await receiver.stats();
      let lastSay = performance.now();
      while (stats.unique < total && performance.now() < until) {
        await sleep(250);
        stats = await receiver.stats();
        if (performance.now() - lastSay > 10_000) {
          lastSay = performance.now();
          say(`   ${stats.unique}/${total}`);
        }
      }
      const series = sampler();
      const node = { ...meter(stats.unique), memory: memory() };
      const spanS = stats.firstAt !== null && stats.lastAt !== null ? (stats.lastAt - stats.firstAt) / 1000 : null;
      const perS = spanS ? stats.unique / spanS : null;
      say(`   ${Math.round(perS ?? 0)} ev/s delivered (${stats.unique}/${total}), ${node.cpuUsPerEvent?.toFixed(0)} µs CPU/event, peak RSS ${node.peakRssMb} MB (largest heap used ${node.memory.heapUsed} MB, heap reserved ${node.memory.heapTotal} MB, external ${node.memory.external} MB)`);
      return { kind: 'backlog', label, threads, delayMs, total, delivered: stats.unique, duplicates: stats.duplicates, complete: stats.unique >= total, spanS, perS, node, series };
    }));
  }
  await receiver.setDelay(0);
  return results;
}
