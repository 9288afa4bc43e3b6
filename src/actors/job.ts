import type { EventRecord } from '../log/event-record.js';

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
  attempts: number;
  firstAttemptAt: number | null;
  lastError: string | null;
  settle(): void;
}

export const SETTLED = (): void => {};
