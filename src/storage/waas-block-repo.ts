import type { Sql } from './db.js';
import { BlockLedger } from '../routing/block-coverage.js';

/** One stored block of an integration, as the producer reads it back. */
export interface StreamBlockRow {
  catalogEntryId: string;
  catalogEntryPublicId: string;
  name: string;
  blockedAt: Date;
}

export interface PackageBlockRow {
  packagePublicId: string;
  name: string;
  blockedAt: Date;
}

/**
 * Blocks: one integration opted out of one stream or one package. Every write
 * is idempotent and says whether it changed anything; whether a subscription
 * is paused is derived from these rows by the rule in block-coverage.ts.
 */
export class WaasBlockRepo {
  private readonly sql: Sql;
  constructor(sql: Sql) {
    this.sql = sql;
  }

  async blockStream(integrationId: string, catalogEntryId: string): Promise<boolean> {
    const rows = await this.sql`
      INSERT INTO stream_blocks (integration_id, catalog_entry_id) VALUES (${integrationId}, ${catalogEntryId})
      ON CONFLICT DO NOTHING RETURNING integration_id`;
    return rows.length > 0;
  }

  async unblockStream(producerWorkspaceId: string, integrationPublicId: string, catalogEntryPublicId: string): Promise<boolean> {
    const rows = await this.sql`
      DELETE FROM stream_blocks b USING integrations i, catalog_entries c
      WHERE b.integration_id = i.id AND b.catalog_entry_id = c.id
        AND i.producer_workspace_id = ${producerWorkspaceId} AND i.public_id = ${integrationPublicId} AND c.public_id = ${catalogEntryPublicId}
      RETURNING b.integration_id`;
    return rows.length > 0;
  }

  async blockPackage(integrationId: string, packageId: string): Promise<boolean> {
    const rows = await this.sql`
      INSERT INTO package_blocks (integration_id, package_id) VALUES (${integrationId}, ${packageId})
      ON CONFLICT DO NOTHING RETURNING integration_id`;
    return rows.length > 0;
  }

  async unblockPackage(producerWorkspaceId: string, integrationPublicId: string, packagePublicId: string): Promise<boolean> {
    const rows = await this.sql`
      DELETE FROM package_blocks b USING integrations i, packages p
      WHERE b.integration_id = i.id AND b.package_id = p.id
        AND i.producer_workspace_id = ${producerWorkspaceId} AND i.public_id = ${integrationPublicId} AND p.public_id = ${packagePublicId}
      RETURNING b.integration_id`;
    return rows.length > 0;
  }

  /** The blocks one integration has, oldest first (the stored rows, not what they imply). */
  async ofIntegration(integrationId: string): Promise<{ streams: StreamBlockRow[]; packages: PackageBlockRow[] }> {
    const [streams, packages] = await Promise.all([
      this.sql<StreamBlockRow[]>`
        SELECT c.id AS "catalogEntryId", c.public_id AS "catalogEntryPublicId", c.name, b.created_at AS "blockedAt"
        FROM stream_blocks b JOIN catalog_entries c ON c.id = b.catalog_entry_id
        WHERE b.integration_id = ${integrationId} ORDER BY b.created_at, c.id`,
      this.sql<PackageBlockRow[]>`
        SELECT p.public_id AS "packagePublicId", p.name, b.created_at AS "blockedAt"
        FROM package_blocks b JOIN packages p ON p.id = b.package_id
        WHERE b.integration_id = ${integrationId} ORDER BY b.created_at, p.id`,
    ]);
    return { streams, packages };
  }

  /** Every block and package membership of one producer, keyed by row ids. */
  async ledgerOfProducer(producerWorkspaceId: string): Promise<BlockLedger> {
    const [streamBlocks, packageBlocks, memberships] = await Promise.all([
      this.sql<{ integrationId: string; entryId: string }[]>`
        SELECT b.integration_id AS "integrationId", b.catalog_entry_id AS "entryId"
        FROM stream_blocks b JOIN catalog_entries c ON c.id = b.catalog_entry_id
        WHERE c.producer_workspace_id = ${producerWorkspaceId}`,
      this.sql<{ integrationId: string; packageId: string }[]>`
        SELECT b.integration_id AS "integrationId", b.package_id AS "packageId"
        FROM package_blocks b JOIN packages p ON p.id = b.package_id
        WHERE p.producer_workspace_id = ${producerWorkspaceId}`,
      this.sql<{ packageId: string; entryId: string }[]>`
        SELECT ps.package_id AS "packageId", ps.catalog_entry_id AS "entryId"
        FROM package_streams ps JOIN packages p ON p.id = ps.package_id
        WHERE p.producer_workspace_id = ${producerWorkspaceId}`,
    ]);
    const ledger = new BlockLedger();
    for (const b of streamBlocks) ledger.blockStream(b.integrationId, b.entryId);
    for (const b of packageBlocks) ledger.blockPackage(b.integrationId, b.packageId);
    for (const m of memberships) ledger.addToPackage(m.packageId, m.entryId);
    return ledger;
  }
}
