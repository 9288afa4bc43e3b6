import { writeFile } from 'node:fs/promises';
import { int, ms, pct, secs, table } from './table.mjs';
import { lineChart } from './svg-chart.mjs';

/**
 * Turns the run's results into one Markdown document, printed to the console
 * and written to bench/results/results.md, and the chart beside it (results.svg).
 * Same text in both places, so what a reader sees in CI logs and what is
 * committed cannot disagree.
 *
 * Layout: the summary (one row per phase: events/s, CPU µs per event, peak
 * RSS), then (a) ingress only, (b) end to end, (b2) accept→deliver latency,
 * (c) backlog drains, the chart, how each figure is taken, and the observations.
 */
const ran = (r) => r && !r.skipped && !r.error;
const us = (n) => (n === null || n === undefined ? '–' : Math.round(n).toLocaleString('en-US'));
const mb = (n) => (n === null || n === undefined ? '–' : String(n));
// Latencies from sub-ms timestamps: one decimal, the sign kept (see phases/latency.mjs).
const ms1 = (n) => (n === null || n === undefined ? '–' : n.toFixed(1));

/**
 * CPU per event in units of the baseline's CPU per request (bare node:http, same run):
 * how many bare HTTP answers one event costs. The box's speed cancels out, so runs on
 * a fast and a slow host (this shared one swings 2–3× between sessions) compare.
 */
const inBare = (usPerEvent, bareUs) => (usPerEvent == null || !bareUs ? '–' : `${(usPerEvent / bareUs).toFixed(1)}×`);

function summaryRow(r, bareUs) {
  if (!ran(r)) return [r.label, r.threads ?? '–', '–', '–', '–', '–', '–', '–', r.skipped ? `skipped: ${r.skipped}` : `FAILED: ${String(r.error).replace(/[\n|]/g, ' ').slice(0, 100)}`];
  if (r.kind === 'latency') {
    // p99 here is accept→deliver, not an ingress answer time like the other rows.
    return [r.label, r.threads, `${int(r.rate)} paced`, ms1(r.acceptToDeliver?.p99), r.node.cpuPct === null ? '–' : `${r.node.cpuPct} %`, us(r.node.cpuUsPerEvent), inBare(r.node.cpuUsPerEvent, bareUs), mb(r.node.peakRssMb), 'p99 = accept→deliver, see (b2)'];
  }
  const what = { ingress: 'accepted', e2e: 'delivered', backlog: 'delivered' }[r.kind];
  const perS = r.kind === 'ingress' ? r.load.acceptedPerS : r.kind === 'e2e' ? r.delivery.perS : r.perS;
  const p99 = r.load ? ms(r.load.p99) : '–';
  return [r.label, r.threads, `${int(perS)} ${what}`, p99, r.node.cpuPct === null ? '–' : `${r.node.cpuPct} %`, us(r.node.cpuUsPerEvent), inBare(r.node.cpuUsPerEvent, bareUs), mb(r.node.peakRssMb), ''];
}

/** Default threads / threads 1 for one measure, when both ran. */
function threadRatio(rows, pick) {
  const one = rows.find((r) => ran(r) && r.threads === 1);
  const many = rows.filter((r) => ran(r) && r.threads > 1).at(-1);
  if (!one || !many || !pick(one) || !pick(many)) return null;
  return `--threads ${many.threads} / --threads 1: ${pct(pick(many) / pick(one))}`;
}

export function renderReport(r) {
  const o = r.options;
  const out = [];
  const p = (...lines) => out.push(...lines);
  const latency = r.latency ?? [];
  const all = [...r.ingress, ...r.e2e, ...latency, ...r.backlog];
  p('# streamgate benchmark', '');
  p(`- date: ${r.date}${o.quick ? ' — **quick smoke run (BENCH_QUICK=1): figures not for quoting**' : ''}`);
  p(`- node ${r.node}, ${r.platform}, ${r.cpus} CPUs (${r.cpuModel}); ${r.build}`);
  p(
    `- load: autocannon in-process, ${o.duration} s per phase (+${o.warmup} s warm-up), ${o.connections} connections, ` +
      `pipelining ${o.pipelining}, body ${o.bodyBytes} B JSON, ${o.keys} partition keys; receiver: bench/receiver.mjs (node:http), same machine`,
  );
  p(`- event log: ${o.backend === 'embedded' ? 'the embedded log (LMDB in the node\'s process, a fresh data dir per phase) for end to end and latency, Kafka for the other phases' : 'Kafka (a fresh topic per phase)'} + Redis; Postgres: a fresh database for the run; node thread counts: ${o.threads.join(', ')}`);
  p(`- backlog: ${int(o.backlogEvents)} events, ${o.keys} keys, receiver latencies ${o.receiverDelays.join(', ')} ms, each drain watched at most ${o.backlogObserve} s`);
  if (o.profile) p('- **every node ran under --cpu-prof: CPU figures include the profiler**');
  p('', '## Summary', '');
  const perRequest = (x) => (x.cpu?.server == null || !x.acceptedPerS ? '–' : (((x.cpu.server / 100) * 1e6) / x.acceptedPerS).toFixed(1));
  const bareUs = r.baseline ? Number(perRequest(r.baseline)) || null : null;
  p('CPU is the streamgate process alone (every thread), from /proc/<pid>/stat over the measured window; per event = that CPU / events accepted (ingress) or delivered (the others); "in bare requests" = that figure / the baseline\'s CPU per request below (bare node:http, same run), which takes the host\'s speed out. Peak RSS is the process high-water mark (VmHWM).', '');
  p(table(['phase', 'threads', 'events/s', 'p99 ms', 'CPU (% of a core)', 'CPU µs / event', 'in bare requests', 'peak RSS MB', 'notes'], all.map((x) => summaryRow(x, bareUs))));
  if (r.baseline) {
    p('', `Baseline (bare node:http answering 202 at once, same load): ${int(r.baseline.acceptedPerS)} ev/s, p99 ${ms(r.baseline.p99)} ms, ${perRequest(r.baseline)} µs server CPU/request.`);
    const own = r.baseline.own;
    if (own) p('', `Bare streamgate HttpServer (our parser, a trivial dispatch answering 202, same load): ${int(own.acceptedPerS)} ev/s, p99 ${ms(own.p99)} ms, ${perRequest(own)} µs server CPU/request.`);
  }

  p('', '## (a) Ingress only (`--roles ingress`; accepted = 2xx; latency over 2xx, 1 ms resolution)', '');
  p(
    table(
      ['threads', 'accepted ev/s', 'p50 ms', 'p99 ms', 'max ms', 'non-2xx', 'errors', 'CPU µs / accepted', 'records / produce request', 'context switches / event (voluntary, involuntary)', 'peak RSS MB'],
      r.ingress.filter(ran).map((x) => [
        x.threads, int(x.load.acceptedPerS), ms(x.load.p50), ms(x.load.p99), ms(x.load.max), int(x.load.non2xx), int(x.load.errors), us(x.node.cpuUsPerEvent),
        x.node.recordsPerProduce == null ? '–' : x.node.recordsPerProduce.toFixed(1),
        x.node.switchesPerEvent ? `${x.node.switchesPerEvent.voluntary.toFixed(2)}, ${x.node.switchesPerEvent.involuntary.toFixed(2)}` : '–',
        mb(x.node.peakRssMb),
      ]),
    ),
  );
  const ingressRatio = threadRatio(r.ingress, (x) => x.load.acceptedPerS);
  if (ingressRatio) p('', `Accepted events/s, ${ingressRatio}.`);

  p('', '## (b) End to end (every role in one process: autocannon → streamgate → Kafka → streamgate → receiver)', '');
  p(
    table(
      ['threads', 'accepted ev/s', 'ingress p99 ms', 'delivered ev/s', 'delivered / expected', 'tail', 'CPU µs / delivered', 'peak RSS MB'],
      r.e2e.filter(ran).map((x) => [x.threads, int(x.load.acceptedPerS), ms(x.load.p99), int(x.delivery.perS), `${int(x.delivery.unique)} / ${int(x.delivery.expected)}`, secs(x.delivery.tailS), us(x.node.cpuUsPerEvent), mb(x.node.peakRssMb)]),
    ),
  );
  const e2eRatio = threadRatio(r.e2e, (x) => x.delivery.perS);
  if (e2eRatio) p('', `Delivered events/s, ${e2eRatio}.`);
  const withCpu = r.e2e.filter(ran).filter((x) => x.cpu);
  if (withCpu.length) {
    p('', 'Where the cores went over each end-to-end phase (load and drain), in % of one core, from /proc (the box has ' + `${withCpu[0].cores * 100} %` + '):', '');
    const pct = (v) => (v === undefined || v === null ? '–' : `${v} %`);
    p(
      table(
        ['threads', 'streamgate', 'Kafka broker', 'load generator (autocannon)', 'receiver', 'Redis', 'others (Postgres, OS, …)', 'idle'],
        withCpu.map((x) => {
          const c = x.cpu;
          const used = ['streamgate', 'broker', 'load', 'receiver', 'redis', 'others'].reduce((sum, k) => sum + (c[k] ?? 0), 0);
          return [x.threads, pct(c.streamgate), pct(c.broker), pct(c.load), pct(c.receiver), pct(c.redis), pct(c.others), pct(Math.max(0, x.cores * 100 - used))];
        }),
      ),
    );
  }
  p('', '- expected = records the measured load added to the topic (can exceed the 2xx count by the requests in flight when autocannon stops).');
  p('- delivered ev/s = unique event ids at the receiver / (last delivery − first delivery); tail = last delivery − end of the load.');

  p('', '## (b2) accept→deliver latency at half the end-to-end rate', '');
  p(
    table(
      ['threads', 'rate ev/s', 'accept→deliver p50 / p90 / p99 / max ms', 'send→deliver p50 / p90 / p99 / max ms', 'delivered / expected', 'skipped sends', 'non-202', 'CPU µs / delivered', 'peak RSS MB'],
      latency.filter(ran).map((x) => {
        const four = (d) => (d ? [d.p50, d.p90, d.p99, d.max].map(ms1).join(' / ') : '–');
        const non202 = Object.entries(x.rejected).map(([k, n]) => `${int(n)}× ${k}`).join(', ') || '0';
        return [x.threads, int(x.rate), four(x.acceptToDeliver), four(x.sendToDeliver), `${int(x.delivered)} / ${int(x.expected)}`, int(x.skippedSends), non202, us(x.node.cpuUsPerEvent), mb(x.node.peakRssMb)];
      }),
    ),
  );
  for (const x of latency.filter(ran)) p('', `- rate: ${x.basis}; open-loop paced load (undici) for ${x.durationS} s, ${o.keys} keys round robin, body ${o.bodyBytes} B, receiver answering at once.`);
  p(
    '- accept→deliver = first arrival of the event at the receiver − the moment its 202 was read; send→deliver = that arrival − the moment the request was sent. ' +
      'Over events answered 202; both clocks are this machine\'s, so a negative accept→deliver is an event delivered before its 202 was read, kept as measured.',
  );

  p('', '## (c) Backlog drained (`--roles delivery`, a new consumer group on a topic already holding the backlog)', '');
  p(
    table(
      ['receiver latency', 'threads', 'delivered', 'complete', 'first→last', 'delivered ev/s', 'CPU µs / delivered', 'peak RSS MB'],
      r.backlog.filter(ran).map((x) => [`${x.delayMs} ms`, x.threads, `${int(x.delivered)} / ${int(x.total)}`, x.complete ? 'yes' : 'no (observation ended)', secs(x.spanS), int(x.perS), us(x.node.cpuUsPerEvent), mb(x.node.peakRssMb)]),
    ),
  );

  p('', '## Events/s over time', '', '![events/s over time per phase](results.svg)', '');
  p('Ingress lines: 2xx answers per second (autocannon ticks). End-to-end and backlog lines: unique deliveries per 0.5 s at the receiver, as events/s.');

  p('', '## Observations', '');
  const notes = [...(r.notes ?? []), ...all.flatMap((x) => x.observations ?? [])];
  for (const n of notes.length ? notes : ['nothing unusual: no errors, no lost or duplicate events, every node stopped cleanly, no warnings in their logs']) p(`- ${n}`);
  return `${out.join('\n')}\n`;
}

/** The chart of the run: one line per phase, events/s since the phase started. */
export function renderChart(r) {
  const lines = [
    ...r.ingress.filter(ran).map((x) => ({ label: `ingress, ${x.threads} thr (accepted)`, points: x.series })),
    ...r.e2e.filter(ran).map((x) => ({ label: `end to end, ${x.threads} thr (delivered)`, points: x.series })),
    ...r.backlog.filter(ran).map((x) => ({ label: `backlog, receiver ${x.delayMs} ms`, points: x.series })),
  ];
  return lineChart({ title: `streamgate: events/s over time per phase (${r.date.slice(0, 10)}, ${r.cpus} CPUs)`, lines });
}

export async function writeReport(file, text) {
  await writeFile(file, text);
}
