import type postgres from 'postgres';
import type { Sql } from './db.js';
import { newId } from '../ids.js';
import { sameJson } from './json-equal.js';
import type { AuthMode, QueueSettings, SourceRef } from '../routing/queue-settings.js';

export type StreamStatus = 'Published' | 'Deprecated';

/** The desired state of a stream, as PUT /waas/streams sends it. */
export interface StreamInput {
  name: string;
  description: string;
  eventTypes: string[];
  payloadSchema: string | null;
  status: StreamStatus;
}

export interface CatalogEntryRow {
  id: string;
  publicId: string;
  producerWorkspaceId: string;
  name: string;
  description: string;
  eventTypes: string[];
  payloadSchema: string | null;
  status: StreamStatus;
  queueId: string | null;
}

export interface CatalogItem extends CatalogEntryRow {
  packages: string[];
}

/** The stream's name is taken by a queue that cannot carry it (the transaction is rolled back). */
export class StreamConflict extends Error {}

/** Context-header extraction a stream's queue is given (docs/api.md; docs/api.md#configuration-api default headers). */
export const STREAM_EVENT_TYPE: SourceRef = Object.freeze({ source: 'header', name: 'x-service-event-type' });
export const STREAM_GROUP_KEY: SourceRef = Object.freeze({ source: 'header', name: 'x-service-group-key' });

const ENTRY_COLUMNS = 'id, public_id AS "publicId", producer_workspace_id AS "producerWorkspaceId", name, description, event_types AS "eventTypes", payload_schema AS "payloadSchema", status, queue_id AS "queueId"';

/**
 * The catalog: a producer's streams and the queues that carry them. Applying a
 * stream converges the workspace, the queue and the entry in one transaction
 * and writes only what differs, so re-applying an unchanged stream writes nothing.
 */
export class WaasCatalogRepo {
  private readonly sql: Sql;
  constructor(sql: Sql) {
    this.sql = sql;
  }

  /** Marks the workspace a producer; false when it already was one. */
  async enableProducer(workspaceId: string): Promise<boolean> {
    const rows = await this.sql`UPDATE workspaces SET is_producer = true WHERE id = ${workspaceId} AND NOT is_producer RETURNING id`;
    return rows.length > 0;
  }

  /** PUT /waas/streams rules 1–5 (docs/api.md); `changed` is false when nothing was written. */
  async applyStream(workspaceId: string, input: StreamInput): Promise<{ entry: CatalogEntryRow; changed: boolean }> {
    return this.sql.begin(async (tx) => {
      // Locking the workspace serialises applies of one producer, so two
      // concurrent deploys of one stream cannot both create its queue or entry.
      const [ws] = await tx<{ isProducer: boolean; settings: Record<string, unknown> }[]>`
        SELECT is_producer AS "isProducer", settings FROM workspaces WHERE id = ${workspaceId} FOR UPDATE`;
      let changed = false;
      if (!ws!.isProducer) {
        await tx`UPDATE workspaces SET is_producer = true WHERE id = ${workspaceId}`;
        changed = true;
      }
      const queue = await convergeQueue(tx, workspaceId, input.name, ws!.settings);
      changed ||= queue.changed;

      const [existing] = await tx.unsafe<CatalogEntryRow[]>(
        `SELECT ${ENTRY_COLUMNS} FROM catalog_entries WHERE producer_workspace_id = $1 AND name = $2 FOR UPDATE`,
        [workspaceId, input.name],
      );
      if (!existing) {
        const [row] = await tx.unsafe<CatalogEntryRow[]>(
          `INSERT INTO catalog_entries (public_id, producer_workspace_id, name, description, event_types, payload_schema, status, queue_id)
           VALUES ($1, $2, $3, $4, $5::text::jsonb, $6, $7, $8) RETURNING ${ENTRY_COLUMNS}`,
          [newId('cat'), workspaceId, input.name, input.description, JSON.stringify(input.eventTypes), input.payloadSchema, input.status, queue.id],
        );
        return { entry: row!, changed: true };
      }
      const same =
        existing.description === input.description &&
        sameJson(existing.eventTypes, input.eventTypes) &&
        existing.payloadSchema === input.payloadSchema &&
        existing.status === input.status &&
        existing.queueId === queue.id;
      if (same) return { entry: existing, changed };
      const [row] = await tx.unsafe<CatalogEntryRow[]>(
        `UPDATE catalog_entries SET description = $2, event_types = $3::text::jsonb, payload_schema = $4, status = $5, queue_id = $6, updated_at = now()
         WHERE id = $1 RETURNING ${ENTRY_COLUMNS}`,
        [existing.id, input.description, JSON.stringify(input.eventTypes), input.payloadSchema, input.status, queue.id],
      );
      return { entry: row!, changed: true };
    });
  }

  async entryByPublicId(producerWorkspaceId: string, publicId: string): Promise<CatalogEntryRow | null> {
    const [row] = await this.sql.unsafe<CatalogEntryRow[]>(
      `SELECT ${ENTRY_COLUMNS} FROM catalog_entries WHERE producer_workspace_id = $1 AND public_id = $2`,
      [producerWorkspaceId, publicId],
    );
    return row ?? null;
  }

  /** The producer's Published streams with the packages (still Active) they belong to. */
  async published(producerWorkspaceId: string): Promise<CatalogItem[]> {
    return this.sql.unsafe<CatalogItem[]>(
      `SELECT ${ENTRY_COLUMNS.split(', ').map((c) => `c.${c}`).join(', ')},
              COALESCE(ARRAY(SELECT p.public_id FROM package_streams ps JOIN packages p ON p.id = ps.package_id
                             WHERE ps.catalog_entry_id = c.id AND p.status = 'Active' ORDER BY p.id), '{}') AS packages
       FROM catalog_entries c
       WHERE c.producer_workspace_id = $1 AND c.status = 'Published'
       ORDER BY c.name`,
      [producerWorkspaceId],
    );
  }
}

/**
 * The stream's queue: created Public with header extraction and the
 * workspace's demanded auth (rule 2), or, when it exists, made Public with its
 * authentication untouched (rule 3). An extraction source the operator set
 * explicitly is kept: overriding it would silently change what ingress reads.
 */
async function convergeQueue(
  tx: postgres.TransactionSql,
  workspaceId: string,
  name: string,
  workspaceSettings: Record<string, unknown>,
): Promise<{ id: string; changed: boolean }> {
  const select = () => tx<{ id: string; settings: Partial<QueueSettings>; receiving: boolean }[]>`
    SELECT id, settings, EXISTS (SELECT 1 FROM subscriptions s WHERE s.receiving_queue_id = queues.id) AS receiving
    FROM queues WHERE workspace_id = ${workspaceId} AND name = ${name} FOR UPDATE`;
  let [queue] = await select();
  if (!queue) {
    const settings: Partial<QueueSettings> = {
      authMode: demandedAuthMode(workspaceSettings),
      public: true,
      eventType: { ...STREAM_EVENT_TYPE },
      groupKey: { ...STREAM_GROUP_KEY },
    };
    // DO NOTHING: a /v1 PUT may create the same queue at this moment; then it is an existing queue.
    const [row] = await tx<{ id: string }[]>`
      INSERT INTO queues (public_id, workspace_id, name, settings)
      VALUES (${newId('que')}, ${workspaceId}, ${name}, ${tx.json(settings as never)})
      ON CONFLICT (workspace_id, name) DO NOTHING RETURNING id`;
    if (row) return { id: row.id, changed: true };
    [queue] = await select();
  }
  if (queue!.receiving) throw new StreamConflict(`The queue ${name} receives a partner subscription; it cannot also publish a stream.`);
  const existing = queue!;
  const next: Partial<QueueSettings> = {
    ...existing.settings,
    public: true,
    eventType: existing.settings.eventType ?? { ...STREAM_EVENT_TYPE },
    groupKey: existing.settings.groupKey ?? { ...STREAM_GROUP_KEY },
  };
  if (sameJson(next, existing.settings)) return { id: existing.id, changed: false };
  await tx`UPDATE queues SET settings = ${tx.json(next as never)}, updated_at = now() WHERE id = ${existing.id}`;
  return { id: existing.id, changed: true };
}

/**
 * Rule 2: a new queue requires an API key unless the workspace already demands
 * a signed request (workspace setting `defaultAuthMode`), which it then keeps.
 */
export function demandedAuthMode(workspaceSettings: Record<string, unknown>): Extract<AuthMode, 'api_key' | 'signed_request'> {
  return workspaceSettings.defaultAuthMode === 'signed_request' ? 'signed_request' : 'api_key';
}
