import { availableParallelism } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { benchLog } from '../lib/phase-log.mjs';
import { startNodeMeter } from '../lib/node-meter.mjs';
import { startPacedLoad } from '../lib/paced-load.mjs';
import { say } from '../lib/say.mjs';
import { withNode } from './node-run.mjs';

/**
 * (b2) Latency at half the end-to-end rate (issue 15: "accept→deliver p99
 * ≤ 50 ms at half that rate"). One node with every role, at the default thread
 * count, on a fresh topic, under an open-loop paced load (bench/lib/paced-load.mjs)
 * instead of autocannon: at a fixed rate below saturation, a closed loop
 * would only measure its own queue, an open loop measures the service's.
 *
 *   paced load ──► streamgate ──202──► paced load      doneAt  (the answer read)
 *                     └─► Kafka ──► streamgate ──► receiver   at (first arrival of the seq)
 *
 *   accept→deliver = at − doneAt   send→deliver = at − sentAt
 *
 * Both ends stamp performance.timeOrigin + now() on the same machine, so the
 * clocks agree; an event delivered before the client read its 202 gives a
 * slightly negative accept→deliver, which is kept (it is what happened).
 */

/**
 * Thread count and rate: the default thread count (`--threads` unset: the
 * cores this process may use) if its end-to-end phase ran, else the largest
 * that ran, at half its delivered ev/s; none ran: the largest asked for, at
 * BENCH_LATENCY_RATE (which, when set, wins anyway).
 */
export function latencyTarget(options, e2e) {
  const ran = e2e.filter((x) => !x.skipped && !x.error && x.delivery?.perS);
  const from = ran.find((x) => x.threads === availableParallelism()) ?? (ran.length ? ran.reduce((a, b) => (b.threads > a.threads ? b : a)) : null);
  const threads = from ? from.threads : Math.max(...options.threads);
  if (options.latencyRate) return { threads, rate: options.latencyRate, basis: 'BENCH_LATENCY_RATE' };
  if (!from) return { threads, rate: 0, basis: null };
  return { threads, rate: Math.round(from.delivery.perS / 2), basis: `half of ${from.label}'s ${Math.round(from.delivery.perS)} delivered ev/s` };
}

export async function latencyPhase(ctx, e2e) {
  const { options, receiver } = ctx;
  const { threads, rate, basis } = latencyTarget(options, e2e);
  const label = `latency-t${threads}`;
  if (!rate) {
    const skipped = 'no end-to-end figure to halve (set BENCH_LATENCY_RATE)';
    say(`${label}: skipped (${skipped})`);
    return { label, threads, skipped };
  }
  const log = benchLog(ctx, label);
  await log.prepare();
  const drainMs = options.drainTimeout * 1000;
  say(`${label}: all roles, --threads ${threads}, paced ${rate} ev/s (${basis}) for ${options.duration} s`);
  return withNode(ctx, { label, env: log.env(), threads }, async (sg) => {
    const notes = [];
    await receiver.setDelay(0);
    // The end-to-end warm-up (autocannon): its bodies carry no seq, so a late redelivery of one cannot pose as a measured event.
    if (options.warmup) {
      await ctx.load(new URL(sg.base).port, options.warmup);
      const logged = await log.countEvents(sg.base);
      const drained = await receiver.waitForUnique(logged, drainMs);
      if (!drained.complete) notes.push(`warm-up: only ${drained.unique}/${logged} events delivered before the timeout; figures are skewed`);
    }
    await receiver.reset();
    await receiver.track(true);

    const meter = startNodeMeter(sg.child.pid);
    // k0..k{keys-1} like autocannon's requests (lib/load.mjs), taken round robin.
    const keys = Array.from({ length: options.keys }, (_, i) => `k${i}`);
    const load = startPacedLoad({ url: sg.base, path: ctx.ingress.path, headers: ctx.ingress.headers, rate, keys, bodyBytes: options.bodyBytes });
    await sleep(options.duration * 1000);
    await load.stop();
    const accepted = load.records.filter((r) => r.status === 202);
    const seen = await receiver.waitForTracked(accepted.length, drainMs, { onProgress: (s) => say(`   ${s.tracked}/${accepted.length}`) });
    const node = meter(seen.tracked);
    const { seqs, ats } = await receiver.arrivals();
    await receiver.reset();

    const arrivedAt = new Map(seqs.map((seq, i) => [seq, ats[i]]));
    const acceptToDeliver = [];
    const sendToDeliver = [];
    for (const r of accepted) {
      const at = arrivedAt.get(r.seq);
      if (at === undefined) continue;
      acceptToDeliver.push(at - r.doneAt);
      sendToDeliver.push(at - r.sentAt);
    }
    const rejected = {};
    for (const r of load.records) {
      if (r.status === 202) continue;
      const key = r.code ? `${r.status} ${r.code}` : String(r.status);
      rejected[key] = (rejected[key] ?? 0) + 1;
    }
    const result = {
      kind: 'latency', label, threads, rate, basis, durationS: options.duration,
      sent: load.records.length,
      skippedSends: load.skipped(),
      rejected,
      expected: accepted.length,
      delivered: acceptToDeliver.length,
      duplicates: seen.duplicates,
      negative: acceptToDeliver.filter((v) => v < 0).length,
      acceptToDeliver: percentiles(acceptToDeliver),
      sendToDeliver: percentiles(sendToDeliver),
      node,
      notes,
    };
    const a = result.acceptToDeliver;
    say(`   accept→deliver ms: p50 ${fmt(a?.p50)}, p90 ${fmt(a?.p90)}, p99 ${fmt(a?.p99)}, max ${fmt(a?.max)} over ${result.delivered}/${result.expected} delivered; ` +
      `send→deliver p99 ${fmt(result.sendToDeliver?.p99)}; ${node.cpuUsPerEvent?.toFixed(0)} µs CPU/event`);
    return result;
  });
}

const fmt = (n) => (n === null || n === undefined ? '–' : n.toFixed(1));

/** Nearest-rank percentiles (ms) of the values; null when there are none. */
function percentiles(values) {
  if (!values.length) return null;
  const sorted = Float64Array.from(values).sort();
  const at = (q) => sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)];
  return { count: sorted.length, min: sorted[0], p50: at(0.5), p90: at(0.9), p99: at(0.99), max: sorted[sorted.length - 1] };
}
