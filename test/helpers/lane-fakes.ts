import type { LaneRef, ParkedDeliveryRepo, ParkedLane, ParkedRow, ParkedRowInput } from '../../src/storage/parked-delivery-repo.js';
import type { EventRecord } from '../../src/event-log/event-record.js';

/**
 * An in-memory stand-in for ParkedDeliveryRepo with the same semantics as its
 * SQL (upsert that only updates when the new row carries attempts, pages in
 * seq order that first delete what is done), for unit tests of lanes.
 */
export class MemoryParkedRepo {
  readonly rows = new Map<string, ParkedRowInput>();
  upserts = 0;
  failNext = 0;

  private key(r: LaneRef & { seq: bigint }): string {
    return `${r.stream}|${r.partition}|${r.targetId}|${r.laneKey}|${r.seq}`;
  }

  async upsert(rows: readonly ParkedRowInput[]): Promise<void> {
    if (this.failNext > 0) {
      this.failNext--;
      throw new Error('database unavailable');
    }
    this.upserts++;
    for (const row of rows) {
      const prev = this.rows.get(this.key(row));
      if (!prev || row.attempts > 0) this.rows.set(this.key(row), { ...row });
    }
  }

  laneRows(lane: LaneRef): ParkedRowInput[] {
    return [...this.rows.values()]
      .filter((r) => r.stream === lane.stream && r.partition === lane.partition && r.targetId === lane.targetId && r.laneKey === lane.laneKey)
      .sort((a, b) => (a.seq < b.seq ? -1 : 1));
  }

  async nextPage(lane: LaneRef, done: readonly bigint[], limit: number): Promise<ParkedRow[]> {
    await this.delete(lane, done);
    return this.laneRows(lane)
      .slice(0, limit)
      .map((r) => ({ seq: r.seq, record: r.record, attempts: r.attempts, firstAttemptAt: r.firstAttemptAt }));
  }

  async delete(lane: LaneRef, seqs: readonly bigint[]): Promise<void> {
    for (const seq of seqs) this.rows.delete(this.key({ ...lane, seq }));
  }

  async lanes(stream: string, partition: number): Promise<ParkedLane[]> {
    const heads = new Map<string, ParkedLane>();
    for (const r of [...this.rows.values()].sort((a, b) => (a.seq < b.seq ? -1 : 1))) {
      if (r.stream !== stream || r.partition !== partition) continue;
      const k = `${r.targetId}|${r.laneKey}`;
      if (!heads.has(k)) heads.set(k, { targetId: r.targetId, laneKey: r.laneKey, nextAttemptAt: r.nextAttemptAt });
    }
    return [...heads.values()];
  }

  async claimRedeliveries(): Promise<Array<{ partition: number; targetId: string; laneKey: string }>> {
    return [];
  }

  asRepo(): ParkedDeliveryRepo {
    return this as unknown as ParkedDeliveryRepo;
  }
}

export function record(id: string, partitionKey: string | null = 'k'): EventRecord {
  return {
    v: 1, id, tenantPublicId: 'ten_t', workspaceId: '1', queueId: '1', queueName: 'q', receivedAt: 0,
    contentType: 'application/json', idempotencyKey: null, eventType: null, groupKey: null, partitionKey, path: null,
    body: Buffer.from(`{"id":"${id}"}`),
  };
}

export const silentLog = {
  warn() {}, error() {}, info() {}, debug() {}, child() { return silentLog; },
} as never;

export function until(predicate: () => boolean, timeoutMs = 5_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  return new Promise((resolve, reject) => {
    const tick = () => {
      if (predicate()) return resolve();
      if (Date.now() > end) return reject(new Error('condition not reached'));
      setTimeout(tick, 5);
    };
    tick();
  });
}
