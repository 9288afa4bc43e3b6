import { writeFile } from 'node:fs/promises';

/**
 * Turns the run's results into one Markdown document, printed to the console
 * and written to bench/results.md. Same text in both places, so what a reader
 * sees in CI logs and what is committed cannot disagree.
 */
const int = (n) => (n === null || n === undefined ? '–' : Math.round(n).toLocaleString('en-US'));
// autocannon records latency in whole milliseconds; 0 means under 1 ms.
const ms = (n) => (n === null || n === undefined ? '–' : n === 0 ? '<1' : String(Math.round(n * 100) / 100));
// A tail of -0.001 s only means the last delivery beat the load-end timestamp.
const secs = (n) => (n === null || n === undefined ? '–' : `${Math.max(0, n).toFixed(2)} s`);

/** A Markdown table with padded columns, readable as plain text too. */
function table(head, rows) {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
  const line = (cells) => `| ${cells.map((c, i) => String(c).padEnd(widths[i])).join(' | ')} |`;
  return [line(head), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map(line)].join('\n');
}

function codes(load) {
  const entries = Object.entries(load.statusCodes);
  return entries.length ? entries.map(([c, n]) => `${c}×${n}`).join(' ') : '–';
}

function loadRow(name, load) {
  return [name, int(load.acceptedPerS), ms(load.p50), ms(load.p99), ms(load.max), int(load.accepted), int(load.non2xx), int(load.errors), int(load.timeouts), codes(load)];
}

function deliveryRow(name, d) {
  if (!d) return [name, '–', '–', '–', '–', '–', '–', 'not measured'];
  const notes = [];
  if (!d.complete) notes.push(`INCOMPLETE: ${int(d.expected - d.unique)} missing after timeout`);
  if (d.duplicates) notes.push(`${int(d.duplicates)} duplicate deliveries`);
  if (d.wrongSize) notes.push(`${int(d.wrongSize)} bodies of wrong size`);
  if (d.missingId) notes.push(`${int(d.missingId)} without x-service-event-id`);
  if (d.note) notes.push(d.note);
  return [name, int(d.perS), int(d.expected), int(d.unique), secs(d.spanS), secs(d.tailS), secs(d.startS), notes.join('; ') || 'ok'];
}

export function renderReport(r) {
  const o = r.options;
  const out = [];
  out.push('# streamgate benchmark');
  out.push('');
  out.push(`- date: ${r.date}`);
  out.push(`- node ${r.node}, ${r.platform}, ${r.cpus} CPUs (${r.cpuModel})`);
  out.push(
    `- settings: duration ${o.duration} s per phase (+${o.warmup} s warm-up), ${o.connections} connections, ` +
      `pipelining ${o.pipelining}, body ${o.bodyBytes} B JSON, ${o.keys} partition keys, drain timeout ${o.drainTimeout} s`,
  );
  out.push('- load generator: autocannon (in-process, same machine); baseline: bare uWebSockets.js answering 202 at once');
  out.push('- streamgate runs with all roles (ingress, delivery, management) in one process, so delivering the accepted events competes with ingress for the same CPU');
  out.push('');
  out.push('## Ingress (accepted = 2xx only; latency percentiles over 2xx responses, 1 ms resolution)');
  out.push('');
  out.push(
    table(
      ['phase', 'accepted ev/s', 'p50 ms', 'p99 ms', 'max ms', '2xx', 'non-2xx', 'errors', 'timeouts', 'status codes'],
      [loadRow('baseline (bare uWS)', r.baseline), loadRow('streamgate ingress', r.streamgate)],
    ),
  );
  out.push('');
  out.push(`**streamgate / baseline = ${(r.ratio * 100).toFixed(1)} %** of accepted events/s`);
  out.push('');
  out.push('## Delivery (unique event ids seen by the receiver)');
  out.push('');
  out.push(
    table(
      ['measure', 'delivered ev/s', 'expected', 'delivered', 'first→last', 'tail', 'first after', 'notes'],
      [
        deliveryRow('during + after ingress load', r.delivery),
        deliveryRow('delivery-only (backlog replay)', r.deliveryOnly),
      ],
    ),
  );
  out.push('');
  out.push('- expected = records in the Kafka topic, which can exceed the 2xx count: requests in flight when autocannon stops are still acked by streamgate.');
  out.push('- delivered ev/s = unique events / (last delivery − first delivery) at the receiver.');
  out.push('- tail = last delivery − end of the ingress load: how far delivery lagged behind ingress.');
  out.push('- first after = first delivery − start of the ingress load, or − spawn of the replay node (boot + group join + first fetch).');
  out.push('- delivery-only: after the first node drained and stopped, a fresh `--roles delivery` node with a new consumer group replays the whole topic with no ingress load: delivery capacity on its own.');
  if (r.notes.length) {
    out.push('');
    out.push('## Observations');
    out.push('');
    for (const n of r.notes) out.push(`- ${n}`);
  }
  return `${out.join('\n')}\n`;
}

export async function writeReport(file, text) {
  await writeFile(file, text);
}
