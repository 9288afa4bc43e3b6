/**
 * Turns raw counters into the delivery figures and the plain-language
 * observations of the report. Anything that looks wrong (errors, missing or
 * duplicate deliveries, slow shutdown, warnings in the service's log) is
 * spelled out here, because a throughput number alone hides it.
 */

/** Receiver counters -> delivery figures. Times are wall-clock ms (performance.timeOrigin based). */
export function summarizeDelivery(stats, expected, { startRef, tailRef }) {
  const spanS = stats.firstAt !== null && stats.lastAt !== null ? (stats.lastAt - stats.firstAt) / 1000 : null;
  return {
    expected,
    unique: stats.unique,
    requests: stats.requests,
    duplicates: stats.duplicates,
    wrongSize: stats.wrongSize,
    missingId: stats.missingId,
    complete: stats.complete,
    spanS,
    perS: spanS ? stats.unique / spanS : null,
    // first delivery after the reference point: load start, or spawn of the replay node
    startS: stats.firstAt !== null ? (stats.firstAt - startRef) / 1000 : null,
    // how long delivery ran on after the ingress load stopped
    tailS: tailRef !== null && stats.lastAt !== null ? (stats.lastAt - tailRef) / 1000 : null,
  };
}

const cpuText = (cpu) =>
  Object.entries(cpu)
    .map(([who, pct]) => `${who} ${pct === null ? '?' : `${pct} %`}`)
    .join(', ');

export function observations({ options, baseline, streamgate, expected, delivery, deliveryOnly, shutdown, replayShutdown, logs, readyMs }) {
  const notes = [];
  for (const [name, load] of [['baseline', baseline], ['streamgate', streamgate]]) {
    if (load.non2xx || load.errors) {
      notes.push(`**${name}: ${load.non2xx} non-2xx responses, ${load.errors} socket errors (${load.timeouts} timeouts)** — status codes ${JSON.stringify(load.statusCodes)}`);
    }
  }
  if (expected < streamgate.accepted) {
    notes.push(`**Kafka holds ${expected} records but streamgate answered 2xx ${streamgate.accepted} times: acknowledged events are missing from the log**`);
  } else if (expected > streamgate.accepted) {
    const extra = expected - streamgate.accepted;
    if (extra <= options.connections * options.pipelining) {
      notes.push(`Kafka holds ${extra} more records than 2xx responses counted: requests in flight when autocannon stopped (≤ connections × pipelining is expected).`);
    } else {
      notes.push(`**Kafka holds ${extra} more records than 2xx responses counted, more than the ${options.connections * options.pipelining} requests that can be in flight: events were written to the log but their 202 never reached the client**`);
    }
  }
  if (options.pipelining > 1) {
    // Seen on uWebSockets.js 20.30 (unofficial build): when a pipelined request is
    // answered from a later tick (streamgate answers after the Kafka ack), uWS sends
    // nothing and stops reading that socket; the bare baseline answers synchronously
    // and is unaffected. Upstream calls async pipelining unsupported.
    notes.push('pipelining > 1: uWebSockets.js does not support answering pipelined requests asynchronously; streamgate figures with pipelining are not comparable to the baseline.');
  }
  for (const [name, d] of [['delivery', delivery], ['delivery-only', deliveryOnly]]) {
    if (!d.complete) notes.push(`**${name}: only ${d.unique} of ${d.expected} events arrived before the drain timeout**`);
    if (d.duplicates) notes.push(`${name}: ${d.duplicates} duplicate deliveries (same x-service-event-id twice)`);
    if (d.wrongSize) notes.push(`**${name}: ${d.wrongSize} deliveries with a body of the wrong size**`);
    if (d.missingId) notes.push(`**${name}: ${d.missingId} deliveries without x-service-event-id**`);
  }
  if (delivery.complete && delivery.tailS !== null && delivery.tailS < 0.5) {
    notes.push('Delivery kept pace with ingress (no backlog at the end of the load), so "during + after" is bounded by the ingress rate; the delivery-only row is the delivery capacity.');
  }
  notes.push(`CPU, % of one core, during baseline load: ${cpuText(baseline.cpu)}`);
  if (baseline.cpu.autocannon >= 90) {
    notes.push('autocannon used a whole core during the baseline: the baseline is bounded by the load generator, so the real uWS ceiling is higher and the ratio flatters streamgate.');
  }
  notes.push(`CPU during streamgate load: ${cpuText(streamgate.cpu)}`);
  // Over a drain of a few ms the percentages are noise: only show a real backlog drain.
  if (delivery.tailS !== null && delivery.tailS >= 1) notes.push(`CPU while delivery drained the backlog after the load: ${cpuText(delivery.cpu)}`);
  notes.push(`CPU during delivery-only replay: ${cpuText(deliveryOnly.cpu)}`);
  notes.push(`streamgate ready ${readyMs[0]} ms after spawn (delivery-only node: ${readyMs[1]} ms)`);
  for (const [name, s] of [['streamgate', shutdown], ['delivery-only node', replayShutdown]]) {
    const how = s.killed ? 'did NOT stop within the grace period and was killed' : `exited ${s.signal ?? s.code}`;
    notes.push(`${name} SIGTERM → exit took ${s.ms} ms, ${how}`);
  }
  for (const log of logs) {
    const problems = log.problems();
    if (problems.length === 0) {
      notes.push(`no warnings or errors in ${log.file}`);
      continue;
    }
    const total = problems.reduce((n, p) => n + p.count, 0);
    notes.push(`**${total} warn/error lines in ${log.file}**, most frequent:`);
    for (const p of problems.slice(0, 5)) notes.push(`  ${p.count}× \`${p.key}\` — e.g. \`${p.example.slice(0, 300)}\``);
  }
  return notes;
}
