import type { Sql } from './db.js';

/** A request to deliver an event again to one target (POST …/events/{id}/redeliver). */
export interface RedeliveryInput {
  /** '<consumer group>/<topic>': the pipeline whose owner picks the request up. */
  stream: string;
  partition: number;
  targetId: string;
  seq: bigint;
  eventId: string;
  record: Buffer;
  /** The parked lane it joins (a replay: one per partition key, so they go in order); absent: a lane of its own. */
  laneKey?: string;
}

/**
 * Requests wait here until the partition's owner claims them
 * (ParkedDeliveryRepo.claimRedeliveries) and turns each into a lane of its own.
 */
export class RedeliveryRepo {
  private readonly sql: Sql;
  constructor(sql: Sql) {
    this.sql = sql;
  }

  async request(items: readonly RedeliveryInput[]): Promise<void> {
    if (items.length === 0) return;
    await this.sql`
      INSERT INTO redelivery_requests ${this.sql(items.map((r) => ({
        log_stream: r.stream,
        log_partition: r.partition,
        target_id: r.targetId,
        seq: r.seq.toString(),
        event_id: r.eventId,
        record: r.record,
        lane_key: r.laneKey ?? null,
      })))}`;
  }
}
