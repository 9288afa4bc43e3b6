import { int, table } from './table.mjs';

/** bench/results/recovery.md: one section per scenario, the issue's targets beside the figures, raw figures last. */
const s = (msValue) => (msValue === null || msValue === undefined || !Number.isFinite(msValue) ? '–' : `${(msValue / 1000).toFixed(2)} s`);
const verdict = (ok) => (ok === null ? '–' : ok ? 'yes' : '**no**');
const ms = (v) => (v === null || v === undefined ? '–' : String(Math.round(v)));

export function renderRecoveryReport({ date, command, machine, build, options, brokerStartMs, workDir, results }) {
  const out = [
    '# Recovery under load (issue 12)',
    '',
    `Run ${date}. Written by \`bench/recovery.mjs\`; numbers are from one run on a shared machine.`,
    '',
    `- command: \`${command}\``,
    `- machine: node ${machine.node}, ${machine.cpus} CPUs (${machine.cpuModel}); load average before ${machine.loadBefore.map((l) => l.toFixed(2)).join(' / ')}, after ${machine.loadAfter.map((l) => l.toFixed(2)).join(' / ')} (1/5/15 min)`,
    `- streamgate: dist/ built ${build.built}, HEAD ${build.head}${build.dirty}; ${build.kafkaClient}; config/default.yaml defaults (session timeout, producer retryMs, commit interval) unless noted`,
    `- load: ${options.rate} ev/s open loop (requests keep coming while the service hangs; at most ${options.maxInFlight} in flight, a tick finding the cap skips its requests), ${options.keys} partition keys round robin, ${options.bodyBytes} B bodies; ${options.warmupS} s of load before each kill`,
    `- broker: a private single-node KRaft broker (config/infra/up.sh on 127.0.0.1:${options.kafkaPort}, heap ${options.kafkaHeap}, first start ${s(brokerStartMs)}), SIGKILLed and restarted with up.sh; the bench probes it with a Metadata request every 50 ms`,
    `- logs of every node and of the broker: ${workDir} (the broker's dir is deleted at the end)`,
    '',
  ];
  for (const r of results) out.push(...(r.kind === 'broker' ? brokerSection(r) : nodeSection(r)), '');
  out.push('## Raw figures', '', '```json', JSON.stringify(results.map(raw), null, 1), '```', '');
  return out.join('\n');
}

function brokerSection(r) {
  const f = r.figures;
  const dupOk = f.uncommittedAtKill === null ? null : f.duplicates.extra <= Math.max(f.uncommittedAtKill, f.inFlightAtKill);
  return [
    `## ${r.scenario}: broker SIGKILLed under load, restarted after ${r.outageS} s`,
    '',
    'One node with every role. Times from the moment the restarted broker first answered a Metadata request.',
    '',
    table(
      ['figure', 'measured', 'target (issue 12)'],
      [
        ['broker unreachable (SIGKILL → first Metadata answer)', s(f.brokerDownMs), ''],
        ['  of which broker start (up.sh → first answer)', s(f.restartToAnswerMs), ''],
        ['every partition has a leader (after the first answer)', s(f.leadersAfterAnswerMs), ''],
        ['first delivery, any event (after the first answer)', s(f.firstAnyAfterAnswerMs), '≤ 2 s'],
        ['first delivery of an event held through the outage (sent before, 202 after)', s(f.firstHeldDeliveredMs), ''],
        ['first delivery of an event sent after the first answer', s(f.firstNewAfterAnswerMs), '≤ 2 s'],
        ['  first 202 after the first answer (any request)', s(f.first202AfterAnswerMs), ''],
        ['  first request sent after the first answer (the in-flight cap frees as held requests end)', s(f.firstSentAfterAnswerMs), ''],
        ['  first 202 of a request sent after the first answer', s(f.firstNew202AfterAnswerMs), ''],
        ['streamgate process stayed up', verdict(r.stayedUp), 'yes'],
        ['accepted (202) / delivered (distinct ids)', `${int(f.accepted)} / ${int(f.delivered)}`, ''],
        ['accepted but never delivered (lost)', int(f.lost.length), '0'],
        ['duplicate deliveries (copies beyond the first) / events concerned', `${int(f.duplicates.extra)} / ${int(f.duplicates.events)}`, '≤ in flight'],
        ['in flight at the kill: accepted, not yet delivered', int(f.inFlightAtKill), ''],
        [`in flight at the kill: records past the group's committed offset (sampled ${ms(f.lagSampleAgeMs)} ms before)`, int(f.uncommittedAtKill), ''],
        ['duplicates ≤ in flight', verdict(dupOk), 'yes'],
        ['requests in flight at ingress at the kill', int(f.ingressInFlightAtKill), ''],
        ['longest wait for a 202 (any request)', s(Math.max(...Object.values(f.phases).map((p) => p.max ?? 0))), 'kafka.producer.retryMs: 30 s by default'],
        ['delivered although not answered 202 (503 / error)', `${int(f.deliveredNotAccepted.count)} ${JSON.stringify(f.deliveredNotAccepted.statuses)}`, ''],
        ['deliveries while the broker was down', int(f.deliveriesDuringOutage), ''],
        ['records in the topic at the end', int(r.inTopic), `= distinct ids delivered (${int(f.delivered)})`],
        ['requests skipped (in-flight cap reached)', int(r.skipped), ''],
      ],
    ),
    '',
    `Duplicates by when their first copy arrived: before the kill ${f.duplicates.firstCopy.beforeKill}, while the broker was down ${f.duplicates.firstCopy.duringOutage}, after it answered ${f.duplicates.firstCopy.after}` +
      (f.duplicates.secondCopyMs ? `; second copies arrived ${s(f.duplicates.secondCopyMs.first)} to ${s(f.duplicates.secondCopyMs.last)} after the broker answered.` : '.'),
    '',
    'Ingress answers by when the request was sent (latency of the 202s in ms):',
    '',
    phaseTable(f.phases),
    '',
    ...logSection('streamgate log (all roles), times relative to the kill', r.timeline),
    ...stderrLines(r.problems),
    `CPU over the scenario (% of one core): ${Object.entries(r.cpu).map(([k, v]) => `${k} ${v ?? '?'}`).join(', ')}. Shutdown after the run: ${r.shutdown.ms} ms${r.shutdown.killed ? ' (SIGKILLed after the grace period)' : ''}.`,
  ];
}

function nodeSection(r) {
  const f = r.figures;
  const dupOk = f.uncommittedVictim === null ? null : f.duplicates.extra <= f.uncommittedAll;
  return [
    `## ${r.scenario}: a delivery node SIGKILLed under load`,
    '',
    'An ingress node and two `--roles delivery` nodes in one group; delivery-b is killed. "Resumed" is the first delivery of an event sent after the kill, which only the survivor can have made.',
    '',
    table(
      ['figure', 'measured', 'target (issue 12)'],
      [
        [`killed node's partitions (${f.victimPartitions.join(', ')}) delivering again: slowest`, s(f.resumeMaxMs), '≤ 5 s'],
        ['  median over its partitions', s(f.resumeMedianMs), ''],
        ["survivor's own partitions: slowest (control)", s(f.controlMaxMs), ''],
        ['survivor logs the new assignment (after the kill)', s(f.takeoverAssignedMs), ''],
        ['survivor stayed up', verdict(r.survivorUp), 'yes'],
        ['accepted (202) / delivered (distinct ids)', `${int(f.accepted)} / ${int(f.delivered)}`, ''],
        ['accepted but never delivered (lost)', int(f.lost.length), '0'],
        ['duplicate deliveries / on the killed node\'s partitions', `${int(f.duplicates.extra)} / ${int(f.duplicates.onVictimPartitions)}`, '≤ in flight'],
        [`uncommitted at the kill on its partitions / all (sampled ${ms(f.lagSampleAgeMs)} ms before)`, `${int(f.uncommittedVictim)} / ${int(f.uncommittedAll)}`, ''],
        ['duplicates ≤ uncommitted', verdict(dupOk), 'yes'],
        ['requests skipped (in-flight cap reached)', int(r.skipped), ''],
      ],
    ),
    '',
    'Per partition (ms relative to the kill; "resumed" = first delivery of an event sent after the kill):',
    '',
    table(
      ['partition', 'held by', 'keys', 'last delivery before', 'first delivery after', 'resumed', 'uncommitted at kill'],
      f.rows.map((p) => [p.partition, p.victim ? 'killed node' : 'survivor', p.keys, ms(p.lastBeforeKillMs), ms(p.firstAnyAfterKillMs), ms(p.resumeMs), ms(p.uncommittedAtKill)]),
    ),
    '',
    phaseTable(f.phases),
    '',
    ...logSection("survivor's log (delivery-a), times relative to the kill", r.timeline),
    ...Object.entries(r.problems).flatMap(([who, problems]) => {
      const warned = problems.filter((p) => !p.key.startsWith('stderr'));
      return [...(warned.length ? [`${who} logged: ${warned.map((p) => `${p.key} ×${p.count}`).join('; ')}`, ''] : []), ...stderrLines(problems, who)];
    }),
    `CPU over the scenario (% of one core): ${Object.entries(r.cpu).map(([k, v]) => `${k} ${v ?? '?'}`).join(', ')}.`,
  ];
}

/** Crash traces and other stderr output (tapLogs keeps them apart from pino lines). */
function stderrLines(problems, who = 'the node') {
  // The CLI's start banner goes to stderr: not a problem.
  const lines = problems.filter((p) => p.key.startsWith('stderr') && !p.example.startsWith('streamgate: serving on port'));
  return lines.length ? [`stderr of ${who}:`, '', ...lines.map((p) => `- ×${p.count} \`${p.example}\``), ''] : [];
}

function phaseTable(phases) {
  const codes = [...new Set(Object.values(phases).flatMap((p) => Object.keys(p.statuses)))].sort();
  return table(
    ['sent', 'requests', ...codes, 'p50', 'p99', 'max'],
    Object.entries(phases).map(([name, p]) => [name, p.sent, ...codes.map((c) => p.statuses[c] ?? 0), ms(p.p50), ms(p.p99), ms(p.max)]),
  );
}

function logSection(title, timeline) {
  if (!timeline.length) return [`${title}: nothing at info or above.`, ''];
  return [
    `${title} (every line at info and above):`,
    '',
    table(
      ['message', 'count', 'first', 'last', 'example fields'],
      timeline.map((t) => [t.key, t.count, `${t.firstS.toFixed(2)} s`, `${t.lastS.toFixed(2)} s`, `\`${t.example.replaceAll('|', '\\|')}\``]),
    ),
    '',
  ];
}

/** The figures without the per-event lists. */
function raw(r) {
  const { timeline, problems, ...rest } = r;
  const figures = { ...r.figures, lost: r.figures.lost.slice(0, 20), lostCount: r.figures.lost.length };
  return { ...rest, figures };
}
