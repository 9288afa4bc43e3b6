import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { onCleanup } from '../lib/cleanup.mjs';
import { inspectEmbeddedLog } from '../lib/embedded-log.mjs';

/** Pinned in the node's config so the bench opens the store with the same count. */
const PARTITIONS = 12;

/**
 * streamgate in single-machine mode: KAFKA_BROKERS and REDIS_URL empty, so the
 * event log is the embedded LMDB log under a fresh STREAMGATE_DATA_DIR (removed
 * at cleanup) and the cache is in-process. Postgres stays the machine's (a
 * fresh bench database), as for Kafka: the log and the cache are what differ.
 *
 * The log can only be counted once no streamgate process has it open
 * (`live: false`): the caller calls countEvents()/uncommitted() after stopping
 * the node. The group name is the embedded reader's key for committed offsets,
 * so a new group replays the log from the start.
 */
export function embeddedBackend({ runId, workDir }) {
  const dataDir = join(workDir, 'embedded-data');
  const logDir = join(dataDir, 'log');
  const group = `sg-bench-${runId}`;
  const replayGroup = `${group}-replay`;
  onCleanup(() => rm(dataDir, { recursive: true, force: true }));
  let counted = null;
  return {
    name: 'embedded',
    title: 'embedded LMDB log + in-process cache',
    logLabel: 'the embedded log',
    live: false,
    env: { KAFKA_BROKERS: '', REDIS_URL: '', STREAMGATE_DATA_DIR: dataDir, STREAMGATE_KAFKA_GROUP: group },
    groups: { first: group, replay: replayGroup },
    configYaml: `embeddedLog:\n  partitions: ${PARTITIONS}\n`,
    pids: {},
    async countEvents() {
      counted = await inspectEmbeddedLog(logDir, PARTITIONS, []);
      return counted.records;
    },
    async uncommitted(groupId) {
      return (await inspectEmbeddedLog(logDir, PARTITIONS, [groupId])).uncommitted[groupId];
    },
    /** Offsets handed out without a record behind them (an append that failed after reserving one). */
    async notes() {
      if (!counted || counted.endOffsets === counted.records) return [];
      return [`**the embedded log has ${counted.records} records but its partitions' end offsets sum to ${counted.endOffsets}: ${counted.endOffsets - counted.records} offsets without a record**`];
    },
  };
}
