import type { Sql } from './db.js';

/** Where a lane lives: its rows are ordered by seq (the Kafka offset of each record). */
export interface LaneRef {
  /** The delivery pipeline: '<consumer group>/<topic>' (see migration 030). */
  stream: string;
  partition: number;
  targetId: string;
  laneKey: string;
}

export interface ParkedRowInput extends LaneRef {
  seq: bigint;
  eventId: string;
  /** The event record, encoded as in the log. */
  record: Buffer;
  attempts: number;
  firstAttemptAt: Date | null;
  /** Set on a lane's head only. */
  nextAttemptAt: Date | null;
  lastError: string | null;
}

export interface ParkedRow {
  seq: bigint;
  record: Buffer;
  attempts: number;
  firstAttemptAt: Date | null;
}

export interface ParkedLane {
  targetId: string;
  laneKey: string;
  nextAttemptAt: Date | null;
}

const CHUNK = 1000;

/**
 * Durable parking of delivery lanes (see migration 030). The partition's owner
 * writes rows when a lane's head must wait for a later retry (the head and
 * everything behind it), re-reads them page by page when the head is due, and
 * deletes what it finished in the same statement that reads the next page.
 */
export class ParkedDeliveryRepo {
  private readonly sql: Sql;
  constructor(sql: Sql) {
    this.sql = sql;
  }

  /**
   * Inserts rows; a row already there keeps its state unless the new one
   * carries attempts (a head being re-parked after another failed attempt).
   * A replayed record parked twice is therefore a no-op.
   */
  async upsert(rows: readonly ParkedRowInput[]): Promise<void> {
    for (let i = 0; i < rows.length; i += CHUNK) {
      const chunk = rows.slice(i, i + CHUNK).map((r) => ({
        log_stream: r.stream,
        log_partition: r.partition,
        target_id: r.targetId,
        lane_key: r.laneKey,
        seq: r.seq.toString(),
        event_id: r.eventId,
        record: r.record,
        attempts: r.attempts,
        first_attempt_at: r.firstAttemptAt,
        next_attempt_at: r.nextAttemptAt,
        last_error: r.lastError,
      }));
      await this.sql`
        INSERT INTO parked_deliveries ${this.sql(chunk)}
        ON CONFLICT (log_stream, log_partition, target_id, lane_key, seq) DO UPDATE
          SET attempts = EXCLUDED.attempts, first_attempt_at = EXCLUDED.first_attempt_at,
              next_attempt_at = EXCLUDED.next_attempt_at, last_error = EXCLUDED.last_error
          WHERE EXCLUDED.attempts > 0`;
    }
  }

  /**
   * Deletes the rows `done` and returns the next `limit` rows of the lane, in
   * order, in one round trip. (The SELECT sees the table as it was before the
   * DELETE, so the deleted rows are excluded by hand.)
   */
  async nextPage(lane: LaneRef, done: readonly bigint[], limit: number): Promise<ParkedRow[]> {
    const doneSeqs = done.map(String);
    const rows = await this.sql<{ seq: string; record: Buffer; attempts: number; firstAttemptAt: Date | null }[]>`
      WITH gone AS (
        DELETE FROM parked_deliveries
        WHERE log_stream = ${lane.stream} AND log_partition = ${lane.partition} AND target_id = ${lane.targetId}
          AND lane_key = ${lane.laneKey} AND seq = ANY(${doneSeqs}::bigint[])
      )
      SELECT seq, record, attempts, first_attempt_at AS "firstAttemptAt"
      FROM parked_deliveries
      WHERE log_stream = ${lane.stream} AND log_partition = ${lane.partition} AND target_id = ${lane.targetId}
        AND lane_key = ${lane.laneKey} AND NOT (seq = ANY(${doneSeqs}::bigint[]))
      ORDER BY seq
      LIMIT ${limit}`;
    return rows.map((r) => ({ seq: BigInt(r.seq), record: r.record, attempts: r.attempts, firstAttemptAt: r.firstAttemptAt }));
  }

  async delete(lane: LaneRef, seqs: readonly bigint[]): Promise<void> {
    if (seqs.length === 0) return;
    await this.sql`
      DELETE FROM parked_deliveries
      WHERE log_stream = ${lane.stream} AND log_partition = ${lane.partition} AND target_id = ${lane.targetId}
        AND lane_key = ${lane.laneKey} AND seq = ANY(${seqs.map(String)}::bigint[])`;
  }

  /** The parked lanes of a partition and when each one's head is due (null: at once). */
  async lanes(stream: string, partition: number): Promise<ParkedLane[]> {
    return this.sql<ParkedLane[]>`
      SELECT DISTINCT ON (target_id, lane_key)
             target_id::text AS "targetId", lane_key AS "laneKey", next_attempt_at AS "nextAttemptAt"
      FROM parked_deliveries
      WHERE log_stream = ${stream} AND log_partition = ${partition}
      ORDER BY target_id, lane_key, seq`;
  }

  /**
   * Turns the redelivery requests of these partitions into parked lanes of
   * their own (or the lane a replay named, one per partition key: its rows
   * then run in offset order), due at once, in one transaction: a crash
   * either leaves the request or the lane, never neither.
   */
  async claimRedeliveries(stream: string, partitions: readonly number[]): Promise<Array<{ partition: number; targetId: string; laneKey: string }>> {
    if (partitions.length === 0) return [];
    return this.sql<Array<{ partition: number; targetId: string; laneKey: string }>>`
      WITH claimed AS (
        DELETE FROM redelivery_requests
        WHERE log_stream = ${stream} AND log_partition = ANY(${[...partitions]}::int[])
        RETURNING id, log_stream, log_partition, target_id, seq, event_id, record, lane_key
      )
      INSERT INTO parked_deliveries (log_stream, log_partition, target_id, lane_key, seq, event_id, record, next_attempt_at)
      SELECT log_stream, log_partition, target_id, coalesce(lane_key, 'r:' || id), seq, event_id, record, now() FROM claimed
      ON CONFLICT DO NOTHING
      RETURNING log_partition AS partition, target_id::text AS "targetId", lane_key AS "laneKey"`;
  }
}
