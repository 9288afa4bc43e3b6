import { createHash } from 'node:crypto';
import type { TransactionSql } from 'postgres';
import type { Sql } from './db.js';
import { eventIdTime } from '../ids.js';
import { decodeAttempts, encodeAttempts, type AttemptEntry } from './attempt-codec.js';
import { decodeDeliveries, encodePatch, type DeliveryStatus } from './delivery-state-codec.js';

export type { AttemptEntry } from './attempt-codec.js';
export type { DeliveryStatus } from './delivery-state-codec.js';

export interface EventRowInput {
  eventId: string;
  workspaceId: string;
  queueName: string;
  eventType: string | null;
  groupKey: string | null;
  partitionKey: string | null;
  idempotencyKey: string | null;
  receivedAt: number;
  partition: number;
  offset: bigint;
  /** '<consumer group>/<topic>': whose consumer saw the event (the replay check's key). */
  stream: string;
  runId: string | null;
  /** The targets it was routed to: each starts pending. */
  targetIds: readonly string[];
}

export interface DeliveryRowInput {
  eventId: string;
  targetId: string;
  status: DeliveryStatus;
  /** Attempts since the last write: appended to what is stored. */
  attempts: AttemptEntry[];
  /** '<consumer group>/<topic>' (see migration 030). */
  stream: string;
  partition: number;
  offset: bigint;
  /** The event's receive time (epoch ms): with the event id, its row's key. */
  receivedAt: number;
}

export interface EventView {
  eventId: string;
  queueName: string;
  eventType: string | null;
  groupKey: string | null;
  partitionKey: string | null;
  idempotencyKey: string | null;
  receivedAt: Date;
  runId: string | null;
  logPartition: number;
  logOffset: bigint;
  deliveries: DeliveryView[];
}

export interface DeliveryView {
  targetId: string;
  targetPublicId: string | null;
  targetName: string | null;
  status: DeliveryStatus;
  attempts: AttemptEntry[];
  updatedAt: Date | null;
}

/** A row as Postgres returns it: the offset as text (bigint), deliveries as stored. */
type EventRowDb = Omit<EventView, 'logOffset' | 'deliveries'> & { logOffset: string; deliveries: string };

/** Changes to one event's deliveries, as event_deliveries_merge takes them (migration 090). */
interface EventPatch {
  eventId: string;
  /** The event's receive time, ISO-8601: with the id, its row's primary key. */
  receivedAt: string;
  patch: string;
}

/**
 * The delivery records: what delivery saw and did, for GET …/events/{id}, the
 * event list, sandbox runs, bulk redelivery and the replay check of a new
 * partition owner. One row per event (event_log, migration 090), its
 * deliveries inside it (src/storage/delivery-state-codec.ts). Written only in
 * batches (src/delivery/delivery-records.ts), with synchronous_commit off:
 * losing the last fraction of a second of log on a database crash costs at
 * most a duplicate delivery on replay, never an event, so the log need not
 * wait for fsync.
 */
export class DeliveryRecordRepo {
  private readonly sql: Sql;
  constructor(sql: Sql) {
    this.sql = sql;
  }

  /**
   * Writes events (each with its routed targets pending) and delivery
   * updates. A delivery whose event is in `events` goes in with it; the
   * others are merged into their event's row. Returns the deliveries whose
   * event has no row (not written yet, or past retention): nothing was
   * written for them.
   */
  async writeBatch(events: readonly EventRowInput[], deliveries: readonly DeliveryRowInput[]): Promise<DeliveryRowInput[]> {
    if (events.length === 0 && deliveries.length === 0) return [];
    const byEvent = new Map<string, DeliveryRowInput[]>();
    for (const d of deliveries) {
      const list = byEvent.get(d.eventId);
      if (list) list.push(d);
      else byEvent.set(d.eventId, [d]);
    }
    const patchOf = (list: readonly DeliveryRowInput[]) =>
      encodePatch(list.map((d) => ({ targetId: d.targetId, status: d.status, attempts: encodeAttempts(d.attempts, d.receivedAt) })));
    // Each batch travels as ONE JSON document that Postgres unpacks
    // (json_to_recordset): one native JSON.stringify here instead of escaping
    // a dozen parameter arrays element by element, and the unpacking runs in
    // the database's process, off this event loop.
    const eventsJson = JSON.stringify(events.map((e) => ({
      e: e.eventId, w: e.workspaceId, q: e.queueName, et: e.eventType, gk: e.groupKey, pk: e.partitionKey,
      ik: e.idempotencyKey, ra: e.receivedAt, p: e.partition, o: e.offset.toString(), st: streamKey(e.stream), r: e.runId,
      rt: encodePatch(e.targetIds.map((targetId) => ({ targetId, status: 'pending', attempts: '' }))),
      pa: patchOf(byEvent.get(e.eventId) ?? []),
    })));
    const unmatched: DeliveryRowInput[] = [];
    await this.sql.begin(async (tx) => {
      await tx`SET LOCAL synchronous_commit = off`;
      const inserted = new Set<string>();
      if (events.length > 0) {
        // Key order, which is time order: the primary key is appended to, and
        // two batches holding the same rows lock them in the same order.
        const rows = await tx<{ e: string }[]>`
          INSERT INTO event_log (event_id, workspace_id, queue_name, event_type, group_key, partition_key,
                                 idempotency_key, received_at, log_partition, log_offset, log_stream, run_id, deliveries)
          SELECT e, w, q, et, gk, pk, ik, to_timestamp(ra / 1000.0), p, o, st, r,
                 event_deliveries_merge(rt, pa, floor(extract(epoch FROM now()) * 1000 - ra)::bigint)
          FROM json_to_recordset(${eventsJson}::text::json)
               AS x(e text, w bigint, q text, et text, gk text, pk text, ik text, ra double precision, p int, o bigint, st int, r text, rt text, pa text)
          ORDER BY ra, e
          ON CONFLICT (received_at, event_id) DO NOTHING
          RETURNING event_id AS e`;
        for (const r of rows) inserted.add(r.e);
      }
      // Updates of events already written (before, or by another node: a replay).
      const patches: EventPatch[] = [];
      for (const [eventId, list] of byEvent) {
        if (inserted.has(eventId)) continue;
        patches.push({ eventId, receivedAt: new Date(list[0]!.receivedAt).toISOString(), patch: patchOf(list) });
      }
      const matched = await mergePatches(tx, patches);
      for (const p of patches) if (!matched.has(p.eventId)) unmatched.push(...byEvent.get(p.eventId)!);
    });
    return unmatched;
  }

  /**
   * The replay check of a partition's new owner (src/delivery/partition-actor.ts):
   * of these fetched records, how many the records hold (written by this
   * stream's consumers), and their deliveries that are over (delivered,
   * failed, blocked): not to be sent again. By primary key (receive time,
   * event id), one probe per record.
   */
  async replayCheck(
    stream: string,
    records: ReadonlyArray<{ eventId: string; receivedAt: number; offset: bigint }>,
  ): Promise<{ recorded: number; finished: Array<{ offset: bigint; targetId: string }> }> {
    if (records.length === 0) return { recorded: 0, finished: [] };
    const json = JSON.stringify(records.map((r) => ({ e: r.eventId, ra: r.receivedAt })));
    const rows = await this.sql<{ e: string; d: string }[]>`
      SELECT l.event_id AS e, l.deliveries AS d
      FROM json_to_recordset(${json}::text::json) AS x(e text, ra double precision)
      JOIN event_log l ON l.received_at = to_timestamp(x.ra / 1000.0) AND l.event_id = x.e
      WHERE l.log_stream = ${streamKey(stream)}`;
    const offsets = new Map(records.map((r) => [r.eventId, r.offset]));
    const finished: Array<{ offset: bigint; targetId: string }> = [];
    for (const r of rows) {
      for (const d of decodeDeliveries(r.d)) {
        if (d.status === 'delivered' || d.status === 'failed' || d.status === 'blocked') finished.push({ offset: offsets.get(r.e)!, targetId: d.targetId });
      }
    }
    return { recorded: rows.length, finished };
  }

  async event(workspaceId: string, eventId: string): Promise<EventView | null> {
    // The time the id carries is the row's received_at: one partition's primary
    // key (received_at, event_id) is probed. An id without one (only ids minted
    // before they carried it) is looked for in every partition.
    const mintedMs = eventIdTime(eventId);
    const [row] = await this.sql<EventRowDb[]>`
      SELECT event_id AS "eventId", queue_name AS "queueName", event_type AS "eventType", group_key AS "groupKey",
             partition_key AS "partitionKey", idempotency_key AS "idempotencyKey", received_at AS "receivedAt",
             run_id AS "runId", log_partition AS "logPartition", log_offset::text AS "logOffset", deliveries
      FROM event_log WHERE event_id = ${eventId} AND workspace_id = ${workspaceId}
        ${mintedMs === null ? this.sql`` : this.sql`AND received_at BETWEEN ${new Date(mintedMs - 1)} AND ${new Date(mintedMs + 1)}`}`;
    if (!row) return null;
    return (await this.withDeliveries([row]))[0]!;
  }

  /** The events of a sandbox run, oldest first. */
  async runEvents(workspaceId: string, runId: string, limit: number): Promise<EventView[]> {
    const rows = await this.sql<EventRowDb[]>`
      SELECT event_id AS "eventId", queue_name AS "queueName", event_type AS "eventType", group_key AS "groupKey",
             partition_key AS "partitionKey", idempotency_key AS "idempotencyKey", received_at AS "receivedAt",
             run_id AS "runId", log_partition AS "logPartition", log_offset::text AS "logOffset", deliveries
      FROM event_log WHERE workspace_id = ${workspaceId} AND run_id = ${runId}
      ORDER BY received_at, event_id LIMIT ${limit}`;
    return this.withDeliveries(rows);
  }

  /**
   * Marks deliveries as pending again (a redelivery was requested): one
   * statement for the whole batch. An event delivery has not consumed yet has
   * no row: its deliveries show pending anyway once it has.
   */
  async markPending(items: ReadonlyArray<{ eventId: string; targetId: string; receivedAt: string }>): Promise<void> {
    if (items.length === 0) return;
    const byEvent = new Map<string, { receivedAt: string; targets: string[] }>();
    for (const i of items) {
      const entry = byEvent.get(i.eventId) ?? { receivedAt: i.receivedAt, targets: [] };
      entry.targets.push(i.targetId);
      byEvent.set(i.eventId, entry);
    }
    const patches = [...byEvent].map(([eventId, { receivedAt, targets }]) => ({
      eventId, receivedAt, patch: encodePatch(targets.map((targetId) => ({ targetId, status: 'pending', attempts: '' }))),
    }));
    await this.sql.begin((tx) => mergePatches(tx, patches));
  }

  private async withDeliveries(rows: EventRowDb[]): Promise<EventView[]> {
    if (rows.length === 0) return [];
    const stored = rows.map((r) => decodeDeliveries(r.deliveries));
    const ids = [...new Set(stored.flatMap((list) => list.map((d) => d.targetId)))];
    const names = new Map(
      (await this.sql<{ id: string; publicId: string; name: string }[]>`
        SELECT id::text, public_id AS "publicId", name FROM targets WHERE id = ANY(${ids}::bigint[])`).map((t) => [t.id, t]),
    );
    return rows.map((r, i) => {
      const at = r.receivedAt.getTime();
      const deliveries: DeliveryView[] = stored[i]!
        .map((d) => {
          const t = names.get(d.targetId);
          return {
            targetId: d.targetId,
            targetPublicId: t?.publicId ?? null,
            targetName: t?.name ?? null,
            status: d.status,
            attempts: decodeAttempts(d.attempts, at),
            updatedAt: d.updatedMs === null ? null : new Date(at + d.updatedMs),
          };
        })
        .sort((a, b) => compareIds(a.targetId, b.targetId));
      return {
        eventId: r.eventId,
        queueName: r.queueName,
        eventType: r.eventType,
        groupKey: r.groupKey,
        partitionKey: r.partitionKey,
        idempotencyKey: r.idempotencyKey,
        receivedAt: r.receivedAt,
        runId: r.runId,
        logPartition: r.logPartition,
        logOffset: BigInt(r.logOffset),
        deliveries,
      };
    });
  }
}

/**
 * Merges each patch into its event's row (event_deliveries_merge); returns
 * the ids of the events that have a row. The rows are locked in key order
 * first (FOR UPDATE under ORDER BY), so two batches touching the same events
 * (threads or nodes around a rebalance) wait for each other instead of
 * deadlocking.
 */
async function mergePatches(tx: TransactionSql, patches: readonly EventPatch[]): Promise<Set<string>> {
  if (patches.length === 0) return new Set();
  const json = JSON.stringify(patches.map((p) => ({ e: p.eventId, ra: p.receivedAt, pa: p.patch })));
  const rows = await tx<{ e: string }[]>`
    UPDATE event_log e
    SET deliveries = event_deliveries_merge(e.deliveries, s.pa, floor(extract(epoch FROM now() - e.received_at) * 1000)::bigint)
    FROM (SELECT l.received_at, l.event_id, x.pa
          FROM json_to_recordset(${json}::text::json) AS x(e text, ra timestamptz, pa text)
          JOIN event_log l ON l.received_at = x.ra AND l.event_id = x.e
          ORDER BY l.received_at, l.event_id
          FOR UPDATE OF l) s
    WHERE e.received_at = s.received_at AND e.event_id = s.event_id
    RETURNING e.event_id AS e`;
  return new Set(rows.map((r) => r.e));
}

/** Numeric ids (bigint as text) in numeric order. */
function compareIds(a: string, b: string): number {
  return a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
}

/**
 * event_log.log_stream: '<consumer group>/<topic>' as the first 4 bytes of
 * its MD5, a signed int (what migration 070 computed for existing rows): 4
 * bytes a row instead of the name, compared on rows already found by
 * partition and offset, so a collision would have to coincide with those too.
 */
export function streamKey(stream: string): number {
  // Every event row carries it: remembered per name (a node has a stream or two), not hashed per row
  // (an MD5 per event was 1.2 % of the busy main thread end to end, bench/results/e2e-profile.md).
  let key = streamKeys.get(stream);
  if (key === undefined) {
    key = createHash('md5').update(stream).digest().readInt32BE(0);
    if (streamKeys.size >= 64) streamKeys.clear();
    streamKeys.set(stream, key);
  }
  return key;
}

const streamKeys = new Map<string, number>();
