import { join } from 'node:path';
import { stopChild } from '../lib/children.mjs';
import { freePort } from '../lib/ports.mjs';
import { configureRoute, startStreamgate } from '../lib/streamgate.mjs';
import { startCpuMeter } from '../lib/cpu.mjs';
import { summarizeDelivery } from '../lib/findings.mjs';
import { now, say } from '../lib/say.mjs';

const QUEUE = 'bench';
const TARGET = 'bench-receiver';
// A log that cannot be counted live: delivery is over once nothing new arrived for this long.
const QUIET_MS = 1_500;

/**
 * streamgate with all roles in one process, on one backend:
 *   ingress   autocannon ──► streamgate ──► event log
 *   delivery  streamgate ──► receiver, timed until every logged event arrived
 * The node is stopped at the end; `total` is then every record in the log
 * (warm-up included), which the delivery-only replay has to deliver.
 */
export async function ingressPhase({ backend, options, load, receiver, workDir }) {
  const tag = backend.name;
  const drainMs = options.drainTimeout * 1000;
  say(`${tag}: start streamgate, configure, load`);
  const sg = await startStreamgate({ name: `streamgate-${tag}`, env: backend.env, port: await freePort(), logFile: join(workDir, `streamgate-${tag}.log`) });
  const port = new URL(sg.base).port;
  await configureRoute({ base: sg.base, creds: backend.creds, queue: QUEUE, target: TARGET, targetUrl: receiver.url });

  // Warm-up events are delivered and forgotten before the measured phase, so
  // the delivery figures below cover exactly the measured events. `before` is
  // how many records the log held then: counted on a live log, otherwise the
  // warm-up events the receiver saw (the log is counted once the node stopped).
  const notes = [];
  let before = 0;
  if (options.warmup) {
    const warm = await load(port, options.warmup);
    if (backend.live) {
      const logged = await backend.countEvents();
      const drained = await receiver.waitForUnique(logged, drainMs);
      if (!drained.complete) notes.push(`warm-up: only ${drained.unique}/${logged} events delivered before the timeout; delivery figures are skewed`);
    } else {
      const drained = await receiver.waitForQuiet(warm.accepted, QUIET_MS, drainMs);
      if (drained.unique < warm.accepted) notes.push(`warm-up: only ${drained.unique}/${warm.accepted} acknowledged events delivered before the timeout; delivery figures are skewed`);
      before = drained.unique;
    }
  }
  await receiver.reset();
  if (backend.live) before = await backend.countEvents();

  let meter = startCpuMeter({ streamgate: sg.child.pid, autocannon: process.pid, receiver: receiver.child.pid, ...backend.pids });
  const loadStart = now();
  const streamgate = await load(port, options.duration);
  const loadEnd = now();
  streamgate.cpu = meter();
  say(`   ${Math.round(streamgate.acceptedPerS)} ev/s, p99 ${streamgate.p99} ms, non-2xx ${streamgate.non2xx}, errors ${streamgate.errors}`);

  // ---- delivery while and after ingress -------------------------------------
  meter = startCpuMeter({ streamgate: sg.child.pid, receiver: receiver.child.pid, ...backend.pids });
  let expected = null;
  let seen;
  if (backend.live) {
    expected = (await backend.countEvents()) - before;
    say(`${tag}: waiting for ${expected} events at the receiver`);
    seen = await receiver.waitForUnique(expected, drainMs, { onProgress: (s) => say(`   ${s.unique}/${expected}`) });
  } else {
    say(`${tag}: waiting for ≥ ${streamgate.accepted} events (2xx count) at the receiver, then ${QUIET_MS} ms without a new one`);
    seen = await receiver.waitForQuiet(streamgate.accepted, QUIET_MS, drainMs, { onProgress: (s) => say(`   ${s.unique}/${streamgate.accepted}+`) });
  }
  const drainCpu = meter();
  const shutdown = await stopChild(sg.child, 30_000);
  const total = await backend.countEvents();
  if (!backend.live) expected = total - before;
  const delivery = summarizeDelivery(seen, expected, { startRef: loadStart, tailRef: loadEnd });
  delivery.cpu = drainCpu;
  say(`   ${Math.round(delivery.perS)} ev/s delivered (${seen.unique}/${expected})`);
  return { streamgate, expected, delivery, total, shutdown, logs: sg.logs, readyMs: sg.readyMs, notes };
}
