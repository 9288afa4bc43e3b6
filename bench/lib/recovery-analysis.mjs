import { readFileSync } from 'node:fs';

/**
 * Turns what the recovery bench recorded (every request: seq, key, sent and
 * answered times, status, event id; every delivery: id, seq, arrival) into the
 * figures of issue 12. All times are wall-clock ms (performance.timeOrigin
 * based, pino's `time` is Date.now(): the same clock to the millisecond).
 */

const LEVELS = { 30: 'info', 40: 'warn', 50: 'error', 60: 'fatal' };

/** A node's pino log, parsed (non-JSON lines skipped). */
export function readLog(file) {
  let text;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  const out = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      out.push(JSON.parse(line));
    } catch {
      // a line cut by a kill
    }
  }
  return out;
}

/**
 * Every line at info and above (at info streamgate logs only milestones:
 * assignments, Kafka answering again, a dead node removed), one row per distinct message:
 * how often, first and last time relative to `refAt` (the kill), and one example.
 */
export function logTimeline(lines, refAt) {
  const rows = new Map();
  for (const l of lines) {
    if (!(l.level >= 30)) continue;
    const key = `${LEVELS[l.level] ?? l.level}: ${l.msg}`;
    const t = (l.time - refAt) / 1000;
    const row = rows.get(key);
    if (row) {
      row.count++;
      row.lastS = t;
    } else {
      const { level, time, pid, hostname, name, msg, ...rest } = l;
      rows.set(key, { key, count: 1, firstS: t, lastS: t, example: JSON.stringify(rest).slice(0, 300) });
    }
  }
  return [...rows.values()].sort((a, b) => a.firstS - b.firstS);
}

/** id -> arrival times (sorted), seq -> first arrival, id -> seq. */
function indexDeliveries(deliveries) {
  const byId = new Map();
  const firstBySeq = new Map();
  const seqById = new Map();
  for (const d of deliveries) {
    seqById.set(d.id, d.seq);
    const list = byId.get(d.id);
    if (list) list.push(d.at);
    else byId.set(d.id, [d.at]);
    if (d.seq >= 0 && !(firstBySeq.get(d.seq) <= d.at)) firstBySeq.set(d.seq, d.at);
  }
  for (const list of byId.values()) list.sort((a, b) => a - b);
  return { byId, firstBySeq, seqById };
}

/** Deliveries beyond the first, per event id, and when each duplicated event was first delivered. */
function duplicates(byId, bounds) {
  let extra = 0;
  const ids = [];
  for (const [id, ats] of byId) {
    if (ats.length > 1) {
      extra += ats.length - 1;
      ids.push({ id, ats });
    }
  }
  // Where the first copy fell: before the kill, between kill and recovery, after.
  const firstCopy = { beforeKill: 0, duringOutage: 0, after: 0 };
  for (const { ats } of ids) {
    if (ats[0] < bounds.killAt) firstCopy.beforeKill++;
    else if (ats[0] < bounds.recoveredAt) firstCopy.duringOutage++;
    else firstCopy.after++;
  }
  const repeatsAfter = ids.map(({ ats }) => ats[1] - bounds.recoveredAt).sort((a, b) => a - b);
  return {
    extra,
    events: ids.length,
    firstCopy,
    // when the second copies arrived, relative to recovery (broker answering / kill)
    secondCopyMs: repeatsAfter.length ? { first: repeatsAfter[0], last: repeatsAfter.at(-1) } : null,
  };
}

function percentile(sorted, p) {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] : null;
}

/** Answers of the requests sent in [from, to): counts per status and 202 latency. */
function phaseStats(records, from, to) {
  const mine = records.filter((r) => r.sentAt >= from && r.sentAt < to);
  const statuses = {};
  for (const r of mine) {
    const key = r.status === 202 ? '202' : r.status === 'error' ? `error ${r.code}` : `${r.status}${r.code ? ` ${r.code}` : ''}`;
    statuses[key] = (statuses[key] ?? 0) + 1;
  }
  const latency = mine.filter((r) => r.status === 202).map((r) => r.doneAt - r.sentAt).sort((a, b) => a - b);
  return { sent: mine.length, statuses, p50: percentile(latency, 0.5), p99: percentile(latency, 0.99), max: latency.at(-1) ?? null };
}

/** Accepted (202) events never delivered, and delivered events the sender never got a 202 for. */
function accounting(records, byId, firstBySeq) {
  const accepted = records.filter((r) => r.status === 202);
  const acceptedIds = new Set(accepted.map((r) => r.eventId));
  const lost = accepted.filter((r) => !byId.has(r.eventId)).map((r) => ({ seq: r.seq, key: r.key, eventId: r.eventId }));
  const notAccepted = records.filter((r) => r.status !== 202 && firstBySeq.has(r.seq));
  const unknown = [...byId.keys()].filter((id) => !acceptedIds.has(id)).length;
  return {
    accepted: accepted.length,
    acceptedIds,
    delivered: byId.size,
    lost,
    // answered 503 (or not answered) but stored and delivered anyway: the sender retries, a duplicate to it
    deliveredNotAccepted: { count: notAccepted.length, statuses: countBy(notAccepted, (r) => String(r.status)) },
    deliveredUnknownIds: unknown - notAccepted.length,
  };
}

function countBy(list, keyOf) {
  const out = {};
  for (const x of list) out[keyOf(x)] = (out[keyOf(x)] ?? 0) + 1;
  return out;
}

const sum = (map) => (map ? [...map.values()].reduce((a, b) => a + b, 0) : null);

/**
 * Scenario "broker": killAt (SIGKILL), restartAt (up.sh started), answeredAt
 * (first Metadata answer), leadersAt (every partition of the topic has a leader).
 */
export function analyseBrokerOutage({ records, deliveries, killAt, restartAt, answeredAt, leadersAt, lagAtKill, ingressInFlightAtKill }) {
  const { byId, firstBySeq } = indexDeliveries(deliveries);
  const acc = accounting(records, byId, firstBySeq);
  const arrivals = deliveries.map((d) => d.at);
  const firstAny = arrivals.filter((at) => at >= answeredAt).reduce((a, b) => Math.min(a, b), Infinity);
  // An event sent after the broker answered can only have gone through the restarted broker.
  const newOnes = records.filter((r) => r.sentAt >= answeredAt && firstBySeq.has(r.seq)).map((r) => firstBySeq.get(r.seq));
  const firstNew = newOnes.reduce((a, b) => Math.min(a, b), Infinity);
  // Where the time to firstNew goes: the sender's in-flight cap (held requests), the append, the delivery.
  const minOf = (xs) => xs.reduce((a, b) => Math.min(a, b), Infinity);
  const sentAfter = records.filter((r) => r.sentAt >= answeredAt);
  const firstSentAfter = minOf(sentAfter.map((r) => r.sentAt));
  const firstNew202 = minOf(sentAfter.filter((r) => r.status === 202).map((r) => r.doneAt));
  const first202 = minOf(records.filter((r) => r.status === 202 && r.doneAt >= answeredAt).map((r) => r.doneAt));
  // Events held by ingress through the outage (sent before the broker answered, 202 after): their first delivery.
  const held = minOf(records.filter((r) => r.sentAt < answeredAt && r.status === 202 && r.doneAt >= answeredAt && firstBySeq.has(r.seq)).map((r) => firstBySeq.get(r.seq)));
  const after = (t) => (Number.isFinite(t) ? t - answeredAt : null);
  const lastBefore = arrivals.filter((at) => at < killAt).reduce((a, b) => Math.max(a, b), -Infinity);
  // Accepted before the kill, not delivered by it: what the outage had in hand.
  const inFlightAtKill = records.filter((r) => r.status === 202 && r.doneAt <= killAt && !(byId.get(r.eventId)?.[0] <= killAt)).length;
  return {
    brokerDownMs: answeredAt - killAt,
    restartToAnswerMs: answeredAt - restartAt,
    leadersAfterAnswerMs: leadersAt === null ? null : leadersAt - answeredAt,
    firstAnyAfterAnswerMs: Number.isFinite(firstAny) ? firstAny - answeredAt : null,
    firstNewAfterAnswerMs: Number.isFinite(firstNew) ? firstNew - answeredAt : null,
    firstHeldDeliveredMs: after(held),
    first202AfterAnswerMs: after(first202),
    firstSentAfterAnswerMs: after(firstSentAfter),
    firstNew202AfterAnswerMs: after(firstNew202),
    // how long the last events sent before the outage took: a check that the first figure is resumption, not backlog
    lastDeliveryBeforeKillMs: Number.isFinite(lastBefore) ? lastBefore - killAt : null,
    deliveriesDuringOutage: arrivals.filter((at) => at >= killAt && at < answeredAt).length,
    phases: {
      'before the kill': phaseStats(records, -Infinity, killAt),
      'broker down (kill → answers)': phaseStats(records, killAt, answeredAt),
      'after it answers': phaseStats(records, answeredAt, Infinity),
    },
    ...acc,
    acceptedIds: undefined,
    duplicates: duplicates(byId, { killAt, recoveredAt: answeredAt }),
    inFlightAtKill,
    ingressInFlightAtKill,
    uncommittedAtKill: sum(lagAtKill?.lag),
    lagSampleAgeMs: lagAtKill ? killAt - lagAtKill.at : null,
    deliveries: deliveries.length,
  };
}

/**
 * Scenario "node": per partition the killed node held, the time from the kill
 * to the first delivery of an event SENT after the kill (only the survivor can
 * have delivered it), and the same for the survivor's own partitions as a control.
 */
export function analyseNodeKill({ records, deliveries, killAt, victimPartitions, partitionOf, partitionCount, lagAtKill, survivorLog }) {
  const { byId, firstBySeq, seqById } = indexDeliveries(deliveries);
  const acc = accounting(records, byId, firstBySeq);
  const keyPartition = new Map();
  const partitionOfSeq = (seq) => {
    const key = records[seq].key;
    if (!keyPartition.has(key)) keyPartition.set(key, partitionOf(key));
    return keyPartition.get(key);
  };
  const perPartition = new Map(Array.from({ length: partitionCount }, (_, p) => [p, { partition: p, victim: victimPartitions.includes(p), lastBeforeKill: -Infinity, firstNewAfterKill: Infinity, firstAnyAfterKill: Infinity, keys: 0 }]));
  for (const key of new Set(records.map((r) => r.key))) perPartition.get(partitionOf(key)).keys++;
  for (const d of deliveries) {
    if (d.seq < 0 || d.seq >= records.length) continue;
    const row = perPartition.get(partitionOfSeq(d.seq));
    if (d.at < killAt) row.lastBeforeKill = Math.max(row.lastBeforeKill, d.at);
    else row.firstAnyAfterKill = Math.min(row.firstAnyAfterKill, d.at);
  }
  for (const r of records) {
    if (r.sentAt < killAt || !firstBySeq.has(r.seq)) continue;
    const row = perPartition.get(partitionOfSeq(r.seq));
    row.firstNewAfterKill = Math.min(row.firstNewAfterKill, firstBySeq.get(r.seq));
  }
  const rel = (t) => (Number.isFinite(t) ? t - killAt : null);
  const rows = [...perPartition.values()].map((r) => ({
    partition: r.partition,
    victim: r.victim,
    keys: r.keys,
    lastBeforeKillMs: rel(r.lastBeforeKill),
    firstAnyAfterKillMs: rel(r.firstAnyAfterKill),
    resumeMs: rel(r.firstNewAfterKill),
    uncommittedAtKill: lagAtKill?.lag.get(r.partition) ?? null,
  }));
  const victimRows = rows.filter((r) => r.victim && r.keys > 0);
  const resumes = victimRows.map((r) => r.resumeMs);
  const takeover = survivorLog.filter((l) => l.msg === 'partitions assigned' && l.time >= killAt && (l.added?.length ?? 0) > 0)[0];
  // Duplicates by partition owner at the kill: the victim's uncommitted records are what may come twice.
  const dupOnVictim = [...byId].filter(([id, ats]) => ats.length > 1 && seqById.get(id) >= 0 && victimPartitions.includes(partitionOfSeq(seqById.get(id)))).reduce((n, [, ats]) => n + ats.length - 1, 0);
  return {
    rows,
    victimPartitions,
    resumeMaxMs: resumes.length && resumes.every((r) => r !== null) ? Math.max(...resumes) : null,
    resumeMedianMs: resumes.length ? percentile([...resumes].sort((a, b) => a - b), 0.5) : null,
    controlMaxMs: Math.max(...rows.filter((r) => !r.victim && r.keys > 0).map((r) => r.resumeMs ?? Infinity)),
    takeoverAssignedMs: takeover ? takeover.time - killAt : null,
    takeoverAdded: takeover?.added ?? [],
    phases: { 'before the kill': phaseStats(records, -Infinity, killAt), 'after the kill': phaseStats(records, killAt, Infinity) },
    ...acc,
    acceptedIds: undefined,
    duplicates: { ...duplicates(byId, { killAt, recoveredAt: killAt }), onVictimPartitions: dupOnVictim },
    uncommittedVictim: lagAtKill ? victimPartitions.reduce((n, p) => n + (lagAtKill.lag.get(p) ?? 0), 0) : null,
    uncommittedAll: sum(lagAtKill?.lag),
    lagSampleAgeMs: lagAtKill ? killAt - lagAtKill.at : null,
    deliveries: deliveries.length,
  };
}
