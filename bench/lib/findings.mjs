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
  if (baseline.own) notes.push(...loadProblems('baseline (own server)', baseline.own));
  notes.push(`CPU, % of one core, during baseline load: ${cpuText(baseline.cpu)}${baseline.own ? `; own server: ${cpuText(baseline.own.cpu)}` : ''}`);
  if (baseline.cpu.autocannon >= 90) {
    notes.push('autocannon used a whole core during the baseline: the baseline is bounded by the load generator, so the real node:http ceiling is higher and the ratio flatters streamgate.');
  }
  return notes;
}

/** What looks wrong in one phase (errors, lost or duplicate events, a slow stop, warnings in its log), in words. */
export function phaseObservations(r, options) {
  if (r.skipped) return [`${r.label}: skipped: ${r.skipped}`];
  const notes = r.load ? loadProblems(r.label, r.load) : [];
  if (r.kind === 'e2e') {
    const d = r.delivery;
    if (d.expected < r.load.accepted) {
      notes.push(`**${r.label}: the topic holds ${d.expected} records for the measured load but streamgate answered 2xx ${r.load.accepted} times: acknowledged events are missing**`);
    } else if (d.expected - r.load.accepted > options.connections * options.pipelining) {
      notes.push(`**${r.label}: the topic holds ${d.expected - r.load.accepted} more records than 2xx responses, more than can be in flight: events were logged but their 202 never reached the client**`);
    }
    if (!d.complete) notes.push(`**${r.label}: only ${d.unique} of ${d.expected} events arrived before the drain timeout**`);
    if (d.duplicates) notes.push(`${r.label}: ${d.duplicates} duplicate deliveries (same x-service-event-id twice)`);
    if (d.wrongSize || d.missingId) notes.push(`**${r.label}: ${d.wrongSize} bodies of the wrong size, ${d.missingId} deliveries without x-service-event-id**`);
  }
  if (r.kind === 'backlog') {
    if (!r.complete) notes.push(`${r.label}: ${r.delivered} of ${r.total} delivered when the observation ended (${options.backlogObserve} s); the rate is over what was delivered`);
    if (r.duplicates) notes.push(`${r.label}: ${r.duplicates} duplicate deliveries`);
  }
  if (r.kind === 'latency') {
    const rejected = Object.values(r.rejected).reduce((a, b) => a + b, 0);
    if (rejected) notes.push(`**${r.label}: ${rejected} of ${r.sent} requests not answered 202: ${JSON.stringify(r.rejected)}**`);
    // A skipped send is a request the schedule owed but the in-flight cap refused: the load fell below its rate.
    if (r.skippedSends) notes.push(`**${r.label}: ${r.skippedSends} sends skipped (in-flight cap reached): the paced rate was not held**`);
    if (r.delivered < r.expected) notes.push(`**${r.label}: only ${r.delivered} of ${r.expected} accepted events arrived before the drain timeout; percentiles cover those**`);
    if (r.negative) notes.push(`${r.label}: ${r.negative} events arrived before their 202 was read (negative accept→deliver, kept)`);
    if (r.duplicates) notes.push(`${r.label}: ${r.duplicates} duplicate deliveries (same x-service-event-id twice; latency uses the first arrival)`);
    // Issue 15's target: accept→deliver p99 ≤ 50 ms at half the end-to-end rate.
    if (r.acceptToDeliver && r.acceptToDeliver.p99 > 50) notes.push(`**${r.label}: accept→deliver p99 ${r.acceptToDeliver.p99.toFixed(1)} ms at ${r.rate} ev/s, above issue 15's 50 ms**`);
  }
  for (const n of r.notes ?? []) notes.push(`${r.label}: ${n}`);
  const s = r.shutdown;
  // streamgate drains on SIGTERM and returns 0; any other code means something else ended the process.
  if (s && (s.killed || s.code !== 0)) {
    notes.push(`**${r.label}: SIGTERM → ${s.killed ? 'not stopped within the grace period, killed' : `exited ${s.signal ?? s.code}`} after ${s.ms} ms (a drained stop exits 0)**`);
  }
  const problems = r.problems ?? [];
  if (problems.length) {
    const total = problems.reduce((n, p) => n + p.count, 0);
    notes.push(
      `**${r.label}: ${total} warn/error lines in ${r.logFile}**, most frequent:`,
      ...problems.slice(0, 3).map((p) => `  ${p.count}× \`${p.key}\` — e.g. \`${p.example.slice(0, 240)}\``),
    );
  }
  return notes;
}
