import type { Sql } from './db.js';
import { BlockLedger } from '../routing/block-coverage.js';

/** A subscription the gate may route to: live, of an accepted integration, with a receiving queue. */
export interface LiveSubscription {
  integrationId: string;
  integrationPublicId: string;
  receivingWorkspaceId: string;
  receivingTenantPublicId: string;
  receivingQueueId: string;
  receivingQueueName: string;
}

/** A producer's stream as the routing gate sees it. */
export interface StreamView {
  catalogEntryPublicId: string;
  producerWorkspaceId: string;
  producerTenantPublicId: string;
  live: LiveSubscription[];
}

/**
 * What the routing gate reads from Postgres when neither its in-process nor
 * its Redis view has the answer. Both reads are keyed the way delivery asks:
 * by the queue an event came through, and by (producer, group key).
 */
export class WaasGateRepo {
  private readonly sql: Sql;
  constructor(sql: Sql) {
    this.sql = sql;
  }

  /** The stream carried by a queue, with its live subscriptions; null for a queue that carries no stream. */
  async streamOfQueue(queueId: string): Promise<StreamView | null> {
    const [entry] = await this.sql<{ id: string; publicId: string; producerWorkspaceId: string; producerTenantPublicId: string }[]>`
      SELECT c.id, c.public_id AS "publicId", c.producer_workspace_id AS "producerWorkspaceId", w.public_id AS "producerTenantPublicId"
      FROM catalog_entries c JOIN workspaces w ON w.id = c.producer_workspace_id
      WHERE c.queue_id = ${queueId}`;
    if (!entry) return null;
    const [subscriptions, streamBlocks, packages, packageBlocks] = await Promise.all([
      this.sql<LiveSubscription[]>`
        SELECT s.integration_id AS "integrationId", i.public_id AS "integrationPublicId",
               i.receiving_workspace_id AS "receivingWorkspaceId", rw.public_id AS "receivingTenantPublicId",
               s.receiving_queue_id AS "receivingQueueId", q.name AS "receivingQueueName"
        FROM subscriptions s
        JOIN integrations i ON i.id = s.integration_id AND i.status = 'Active'
        JOIN workspaces rw ON rw.id = i.receiving_workspace_id
        JOIN queues q ON q.id = s.receiving_queue_id
        WHERE s.catalog_entry_id = ${entry.id}
        ORDER BY s.id`,
      this.sql<{ integrationId: string }[]>`
        SELECT integration_id AS "integrationId" FROM stream_blocks WHERE catalog_entry_id = ${entry.id}`,
      this.sql<{ packageId: string }[]>`
        SELECT package_id AS "packageId" FROM package_streams WHERE catalog_entry_id = ${entry.id}`,
      this.sql<{ integrationId: string; packageId: string }[]>`
        SELECT b.integration_id AS "integrationId", b.package_id AS "packageId"
        FROM package_blocks b JOIN package_streams ps ON ps.package_id = b.package_id
        WHERE ps.catalog_entry_id = ${entry.id}`,
    ]);
    const ledger = new BlockLedger();
    for (const b of streamBlocks) ledger.blockStream(b.integrationId, entry.id);
    for (const p of packages) ledger.addToPackage(p.packageId, entry.id);
    for (const b of packageBlocks) ledger.blockPackage(b.integrationId, b.packageId);
    return {
      catalogEntryPublicId: entry.publicId,
      producerWorkspaceId: entry.producerWorkspaceId,
      producerTenantPublicId: entry.producerTenantPublicId,
      live: subscriptions.filter((s) => ledger.status(s.integrationId, entry.id) === 'live').map((s) => ({ ...s })),
    };
  }

  /** The integrations with an Active activation for (producer, groupKey). */
  async activeIntegrations(producerWorkspaceId: string, groupKey: string): Promise<string[]> {
    const rows = await this.sql<{ integrationId: string }[]>`
      SELECT integration_id AS "integrationId" FROM activations
      WHERE producer_workspace_id = ${producerWorkspaceId} AND group_key = ${groupKey} AND status = 'Active'`;
    return rows.map((r) => r.integrationId);
  }
}
