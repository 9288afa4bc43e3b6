import type { EventRecord } from '../event-log/event-record.js';
import type { RouteTarget } from '../routing/route-table.js';

/**
 * One event on its way to one target: what a lane runs. Jobs made from log
 * entries settle (let their record's offset be committed) when they finish or
 * are durably parked; jobs read back from parked rows settled long ago.
 */
export interface Job {
  record: EventRecord;
  /** The record as stored in the log, kept so parking does not encode it again. */
  encoded: Buffer | null;
  /** The record's Kafka offset: a lane's order. */
  seq: bigint;
  targetId: string;
  /**
   * The target as routed when the job was made; used for its first attempt
   * only. Later attempts look the target up again (configuration may change).
   */
  routed: RouteTarget | null;
  /** When `routed` was looked up (epoch ms). */
  routedAt: number;
  attempts: number;
  firstAttemptAt: number | null;
  lastError: string | null;
  settle(): void;
}

export const SETTLED = (): void => {};
