/**
 * Turns raw counters into the delivery figures and the plain-language
 * observations of the report. Anything that looks wrong (errors, missing or
 * duplicate deliveries, slow shutdown, uncommitted offsets, warnings in the
 * service's log) is spelled out here, because a throughput number alone hides it.
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
    complete: stats.unique >= expected,
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

function loadProblems(name, load) {
  if (!load.non2xx && !load.errors) return [];
  return [`**${name}: ${load.non2xx} non-2xx responses, ${load.errors} socket errors (${load.timeouts} timeouts)** — status codes ${JSON.stringify(load.statusCodes)}`];
}

/** What concerns the run as a whole: the baseline and the load generator. */
export function baselineObservations({ options, baseline }) {
  const notes = loadProblems('baseline', baseline);
  if (options.pipelining > 1) {
    // Seen on uWebSockets.js 20.30 (unofficial build): when a pipelined request is
    // answered from a later tick (streamgate answers after the log's ack), uWS sends
    // nothing and stops reading that socket; the bare baseline answers synchronously
    // and is unaffected. Upstream calls async pipelining unsupported.
    notes.push('pipelining > 1: uWebSockets.js does not support answering pipelined requests asynchronously; streamgate figures with pipelining are not comparable to the baseline.');
  }
  notes.push(`CPU, % of one core, during baseline load: ${cpuText(baseline.cpu)}`);
  if (baseline.cpu.autocannon >= 90) {
    notes.push('autocannon used a whole core during the baseline: the baseline is bounded by the load generator, so the real uWS ceiling is higher and the ratio flatters streamgate.');
  }
  return notes;
}

/** One backend's run: acknowledged vs logged vs delivered, CPU, shutdown, commits, logs. */
export function backendObservations(r) {
  const { options, logLabel, streamgate, expected, delivery, deliveryOnly } = r;
  const notes = loadProblems('streamgate', streamgate);
  const Log = logLabel[0].toUpperCase() + logLabel.slice(1);
  if (expected < streamgate.accepted) {
    notes.push(`**${Log} holds ${expected} records for the measured load but streamgate answered 2xx ${streamgate.accepted} times: acknowledged events are missing from the log**`);
  } else if (expected > streamgate.accepted) {
    const extra = expected - streamgate.accepted;
    const inFlight = options.connections * options.pipelining;
    notes.push(
      extra <= inFlight
        ? `${Log} holds ${extra} more records than 2xx responses counted: requests in flight when autocannon stopped (≤ connections × pipelining is expected).`
        : `**${Log} holds ${extra} more records than 2xx responses counted, more than the ${inFlight} requests that can be in flight: events were written to the log but their 202 never reached the client**`,
    );
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
  notes.push(`CPU during streamgate load: ${cpuText(streamgate.cpu)}`);
  // Over a drain of a few ms the percentages are noise: only show a real backlog drain.
  if (delivery.tailS !== null && delivery.tailS >= 1) notes.push(`CPU while delivery drained the backlog after the load: ${cpuText(delivery.cpu)}`);
  notes.push(`CPU during delivery-only replay: ${cpuText(deliveryOnly.cpu)}`);
  notes.push(`streamgate ready ${r.readyMs[0]} ms after spawn (delivery-only node: ${r.readyMs[1]} ms)`);
  for (const [name, s] of [['streamgate', r.shutdown], ['delivery-only node', r.replayShutdown]]) {
    // streamgate drains on SIGTERM and returns 0; any other code means something else ended the process.
    const clean = !s.killed && s.code === 0;
    const how = s.killed ? 'did NOT stop within the grace period and was killed' : `exited ${s.signal ?? s.code}`;
    notes.push(clean ? `${name} SIGTERM → exit took ${s.ms} ms, ${how}` : `**${name} SIGTERM → exit took ${s.ms} ms, ${how} (a drained stop exits 0)**`);
  }
  // r.uncommitted: { 'first node (group g)': n | null, ... }, read after both nodes stopped
  for (const [who, n] of Object.entries(r.uncommitted)) {
    if (n === null) notes.push(`${who}: committed offsets could not be read`);
    else if (n > 0) notes.push(`**${who}: ${n} records of ${logLabel} not committed when it stopped on SIGTERM: a restart of that group would deliver them again**`);
    else notes.push(`${who}: every record committed when it stopped on SIGTERM`);
  }
  for (const log of r.logs) notes.push(...logProblems(log));
  return notes;
}

function logProblems(log) {
  const problems = log.problems();
  const plain = log.plain();
  const out = plain.length ? [`${log.file}: ${plain.length} plain-text (non-JSON) stdout line(s) among the JSON logs, e.g. \`${plain[0].slice(0, 160)}\``] : [];
  if (problems.length === 0) return [...out, `no warnings or errors in ${log.file}`];
  const total = problems.reduce((n, p) => n + p.count, 0);
  return [
    ...out,
    `**${total} warn/error lines in ${log.file}**, most frequent:`,
    ...problems.slice(0, 5).map((p) => `  ${p.count}× \`${p.key}\` — e.g. \`${p.example.slice(0, 300)}\``),
  ];
}
