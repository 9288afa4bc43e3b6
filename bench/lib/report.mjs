import { writeFile } from 'node:fs/promises';
import { int, ms, pct, secs, table } from './table.mjs';

/**
 * Turns the run's results into one Markdown document, printed to the console
 * and written to bench/results.md. Same text in both places, so what a reader
 * sees in CI logs and what is committed cannot disagree.
 *
 * Layout: a summary with one row per backend (and embedded/kafka ratios),
 * then the ingress and delivery details, then the observations.
 */
const ok = (b) => !b.error;

function codes(load) {
  const entries = Object.entries(load.statusCodes);
  return entries.length ? entries.map(([c, n]) => `${c}×${n}`).join(' ') : '–';
}

function deliveryNotes(d) {
  const notes = [];
  if (!d.complete) notes.push(`INCOMPLETE: ${int(d.expected - d.unique)} missing after timeout`);
  if (d.duplicates) notes.push(`${int(d.duplicates)} duplicate deliveries`);
  if (d.wrongSize) notes.push(`${int(d.wrongSize)} bodies of wrong size`);
  if (d.missingId) notes.push(`${int(d.missingId)} without x-service-event-id`);
  return notes.join('; ') || 'ok';
}

function summaryRow(b) {
  if (!ok(b)) return [b.name, 'FAILED', '–', '–', '–', '–', '–', '–', '–', b.error.replace(/[\n|]/g, ' ').slice(0, 120)];
  const s = b.streamgate;
  const delivery = [deliveryNotes(b.delivery), deliveryNotes(b.deliveryOnly)];
  return [b.name, int(s.acceptedPerS), pct(b.ratio), ms(s.p50), ms(s.p99), int(s.non2xx), int(s.errors), int(b.delivery.perS), int(b.deliveryOnly.perS),
    delivery[0] === delivery[1] ? delivery[0] : `during: ${delivery[0]}; replay: ${delivery[1]}`];
}

const loadRow = (name, load) =>
  [name, int(load.acceptedPerS), ms(load.p50), ms(load.p99), ms(load.max), int(load.accepted), int(load.non2xx), int(load.errors), int(load.timeouts), codes(load)];

const deliveryRow = (name, d) =>
  [name, int(d.perS), int(d.expected), int(d.unique), secs(d.spanS), secs(d.tailS), secs(d.startS), deliveryNotes(d)];

/** embedded / kafka, when both ran and succeeded. */
function comparison(backends) {
  const k = backends.find((b) => b.name === 'kafka' && ok(b));
  const e = backends.find((b) => b.name === 'embedded' && ok(b));
  if (!k || !e) return null;
  const ratio = (a, b) => (a && b ? pct(a / b) : '–');
  return (
    `**embedded / kafka: ingress ${ratio(e.streamgate.acceptedPerS, k.streamgate.acceptedPerS)}, ` +
    `delivery during + after load ${ratio(e.delivery.perS, k.delivery.perS)}, ` +
    `delivery-only ${ratio(e.deliveryOnly.perS, k.deliveryOnly.perS)}**`
  );
}

export function renderReport(r) {
  const o = r.options;
  const done = r.backends.filter(ok);
  const out = [];
  const p = (...lines) => out.push(...lines);
  p('# streamgate benchmark', '');
  p(`- date: ${r.date}`);
  p(`- node ${r.node}, ${r.platform}, ${r.cpus} CPUs (${r.cpuModel})`);
  p(
    `- settings: duration ${o.duration} s per phase (+${o.warmup} s warm-up), ${o.connections} connections, ` +
      `pipelining ${o.pipelining}, body ${o.bodyBytes} B JSON, ${o.keys} partition keys, drain timeout ${o.drainTimeout} s`,
  );
  p(`- backends, in run order: ${r.backends.map((b) => `**${b.name}** (${b.title})`).join(', ')}; Postgres is the machine's for both (a fresh database per backend)`);
  p('- load generator: autocannon (in-process, same machine); baseline: bare uWebSockets.js answering 202 at once, measured once for the run');
  p('- streamgate runs with all roles (ingress, delivery, management) in one process, so delivering the accepted events competes with ingress for the same CPU');
  p('', '## Summary (one row per backend)', '');
  p(
    table(
      ['backend', 'ingress ev/s', '/ baseline', 'p50 ms', 'p99 ms', 'non-2xx', 'errors', 'delivered ev/s (during + after)', 'delivery-only ev/s', 'delivery'],
      r.backends.map(summaryRow),
    ),
  );
  p('');
  p(`Baseline (bare uWS): ${int(r.baseline.acceptedPerS)} ev/s, p50 ${ms(r.baseline.p50)} ms, p99 ${ms(r.baseline.p99)} ms.`);
  const cmp = comparison(r.backends);
  if (cmp) p('', cmp);
  p('', '## Ingress (accepted = 2xx only; latency percentiles over 2xx responses, 1 ms resolution)', '');
  p(
    table(
      ['phase', 'accepted ev/s', 'p50 ms', 'p99 ms', 'max ms', '2xx', 'non-2xx', 'errors', 'timeouts', 'status codes'],
      [loadRow('baseline (bare uWS)', r.baseline), ...done.map((b) => loadRow(`streamgate on ${b.name}`, b.streamgate))],
    ),
  );
  p('', '## Delivery (unique event ids seen by the receiver)', '');
  p(
    table(
      ['measure', 'delivered ev/s', 'expected', 'delivered', 'first→last', 'tail', 'first after', 'notes'],
      done.flatMap((b) => [deliveryRow(`${b.name}: during + after load`, b.delivery), deliveryRow(`${b.name}: delivery-only replay`, b.deliveryOnly)]),
    ),
  );
  p('');
  p('- expected (during + after) = records the measured load added to the log, which can exceed the 2xx count: requests in flight when autocannon stops are still acked by streamgate.');
  p('  - kafka: records in the topic after the load − records before it (read live from the high watermarks).');
  p('  - embedded: the LMDB log cannot be read while streamgate has it open, so the bench waits for ≥ the 2xx count at the receiver and then for delivery to go quiet, stops the node, counts the records in the log, and subtracts the warm-up events delivered before the measured load.');
  p('- expected (delivery-only) = every record in the log, warm-up included.');
  p('- delivered ev/s = unique events / (last delivery − first delivery) at the receiver.');
  p('- tail = last delivery − end of the ingress load: how far delivery lagged behind ingress.');
  p('- first after = first delivery − start of the ingress load, or − spawn of the replay node (boot + group join + first fetch).');
  p('- delivery-only: after the first node drained and stopped, a fresh `--roles delivery` node with a new consumer group (for embedded: a new group name in the same data folder) replays the whole log with no ingress load: delivery capacity on its own.');
  p('', '## Observations', '', '### run', '');
  for (const n of r.notes) p(`- ${n}`);
  for (const b of r.backends) {
    p('', `### ${b.name}`, '');
    if (!ok(b)) p(`- **FAILED: ${b.error}**`);
    for (const n of b.notes ?? []) p(`- ${n}`);
  }
  return `${out.join('\n')}\n`;
}

export async function writeReport(file, text) {
  await writeFile(file, text);
}
