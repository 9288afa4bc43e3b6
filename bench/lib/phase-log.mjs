import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { kafkaAdmin } from './kafka-admin.mjs';
import { onCleanup } from './cleanup.mjs';
import { metricSum } from './node-meter.mjs';
import { say } from './say.mjs';

/** config/default.yaml kafka.partitions: a node finds the topic as it would have made it. */
export const PARTITIONS = 12;

/**
 * A fresh Kafka topic and consumer group per phase: a node of one phase must
 * not see the records another phase left behind (a new group starts at the
 * earliest offset, so it would deliver them all). `group(suffix)` names more
 * groups on the same topic: the backlog drains replay one topic once per
 * receiver latency, each with its own group. Topic and groups are deleted at
 * cleanup, whichever way the run ends.
 */
export function phaseLog({ runId, brokers, label }) {
  const topic = `sg-bench-${runId}-${label}`;
  const groups = [];
  const admin = kafkaAdmin(brokers);
  onCleanup(async () => {
    for (const problem of await admin.cleanup(topic, groups)) say(`cleanup ${topic}: ${problem}`);
  });
  const group = (suffix = '') => {
    const name = `${topic}${suffix ? `-${suffix}` : ''}`;
    groups.push(name);
    return name;
  };
  return {
    topic,
    admin,
    /** The node environment for this topic and a new group on it. */
    env: (suffix) => ({ KAFKA_BROKERS: brokers.join(','), STREAMGATE_KAFKA_TOPIC: topic, STREAMGATE_KAFKA_GROUP: group(suffix) }),
    /** Makes the topic, as an operator would before starting nodes (a node that makes it itself reports it missing to readiness first). */
    prepare: () => admin.createTopic(topic, PARTITIONS),
    /** Records in the topic (`base`, the node's URL, is for the embedded log's count). */
    countEvents: (_base) => settledCount(admin, topic),
  };
}

/**
 * The embedded log instead of a topic (`BENCH_BACKEND=embedded`): no
 * KAFKA_BROKERS, so the node keeps its log in LMDB under a data dir of its
 * own, made by `prepare()` under `workDir` and deleted at cleanup. Events
 * accepted are read off the node's /metrics (streamgate_ingress_accepted_total).
 */
function embeddedPhaseLog({ workDir, label }) {
  let dataDir = null;
  onCleanup(async () => {
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });
  return {
    prepare: async () => {
      dataDir = await mkdtemp(join(workDir, `${label}-data-`));
    },
    env: () => ({ KAFKA_BROKERS: '', STREAMGATE_DATA_DIR: dataDir }),
    countEvents: (base) => settledMetric(`${base}/metrics`, 'streamgate_ingress_accepted_total'),
  };
}

/** The event log of one phase: a fresh Kafka topic, or (`backend` embedded; ctx.options.backend by default) a fresh embedded log. */
export function benchLog(ctx, label, backend = ctx.options.backend) {
  return backend === 'embedded'
    ? embeddedPhaseLog({ workDir: ctx.workDir, label })
    : phaseLog({ runId: ctx.runId, brokers: ctx.brokers, label });
}

/**
 * A counter of a node's /metrics (every series added up) once it holds still
 * for a few reads in a row: appends in flight at the load's deadline land after it.
 */
function settledMetric(url, name) {
  return settle(async () => metricSum(await (await fetch(url, { signal: AbortSignal.timeout(3_000) })).text(), name));
}

/**
 * Records in the topic once produce calls still in flight have landed: the
 * count must hold still for a few reads in a row (streamgate acks only after
 * Kafka does, but the bench stops reading responses at the deadline).
 */
function settledCount(admin, topic) {
  return settle(() => admin.countEvents(topic));
}

/** `read()` once it gives the same answer three times in a row, 150 ms apart. */
async function settle(read) {
  let last = await read();
  for (let stable = 0; stable < 3; ) {
    await sleep(150);
    const n = await read();
    stable = n === last ? stable + 1 : 0;
    last = n;
  }
  return last;
}
