import type { Sql } from './db.js';
import { newId } from '../ids.js';

/** Status values as the reference's state table writes them. */
export type PackageStatus = 'Active' | 'archived';

export interface PackageRow {
  id: string;
  publicId: string;
  key: string;
  name: string;
  description: string | null;
  status: PackageStatus;
  streams: string[];
}

const PACKAGE_SELECT = `
  SELECT p.id, p.public_id AS "publicId", p.key, p.name, p.description, p.status,
         ARRAY(SELECT c.public_id FROM package_streams ps JOIN catalog_entries c ON c.id = ps.catalog_entry_id
               WHERE ps.package_id = p.id ORDER BY c.name) AS streams
  FROM packages p`;

/** Packages: named groups of a producer's streams, and the lever of package blocks. */
export class WaasPackageRepo {
  private readonly sql: Sql;
  constructor(sql: Sql) {
    this.sql = sql;
  }

  /** Creates an Active package whose key is `slug`, suffixed -2, -3… when the producer already uses it. */
  async create(producerWorkspaceId: string, slug: string, name: string, description: string | null): Promise<PackageRow> {
    return this.sql.begin(async (tx) => {
      await tx`SELECT id FROM workspaces WHERE id = ${producerWorkspaceId} FOR UPDATE`;
      const taken = new Set(
        (await tx<{ key: string }[]>`
          SELECT key FROM packages WHERE producer_workspace_id = ${producerWorkspaceId} AND (key = ${slug} OR key LIKE ${`${slug}-%`})`).map((r) => r.key),
      );
      let key = slug;
      for (let n = 2; taken.has(key); n++) key = `${slug}-${n}`;
      const [row] = await tx<{ id: string }[]>`
        INSERT INTO packages (public_id, producer_workspace_id, key, name, description, status)
        VALUES (${newId('pkg')}, ${producerWorkspaceId}, ${key}, ${name}, ${description}, 'Active') RETURNING id`;
      const [created] = await tx.unsafe<PackageRow[]>(`${PACKAGE_SELECT} WHERE p.id = $1`, [row!.id]);
      return created!;
    });
  }

  async byPublicId(producerWorkspaceId: string, publicId: string): Promise<PackageRow | null> {
    const [row] = await this.sql.unsafe<PackageRow[]>(`${PACKAGE_SELECT} WHERE p.producer_workspace_id = $1 AND p.public_id = $2`, [producerWorkspaceId, publicId]);
    return row ?? null;
  }

  async ofProducer(producerWorkspaceId: string): Promise<PackageRow[]> {
    return this.sql.unsafe<PackageRow[]>(`${PACKAGE_SELECT} WHERE p.producer_workspace_id = $1 ORDER BY p.id`, [producerWorkspaceId]);
  }

  /** Renames or re-describes; the key stays, so references to it keep working. */
  async update(id: string, name: string, description: string | null): Promise<{ row: PackageRow; changed: boolean }> {
    const changed = await this.sql`
      UPDATE packages SET name = ${name}, description = ${description}, updated_at = now()
      WHERE id = ${id} AND (name IS DISTINCT FROM ${name} OR description IS DISTINCT FROM ${description}) RETURNING id`;
    const [row] = await this.sql.unsafe<PackageRow[]>(`${PACKAGE_SELECT} WHERE p.id = $1`, [id]);
    return { row: row!, changed: changed.length > 0 };
  }

  /** True when the stream was not yet in the package. */
  async addStream(packageId: string, catalogEntryId: string): Promise<boolean> {
    const rows = await this.sql`
      INSERT INTO package_streams (package_id, catalog_entry_id) VALUES (${packageId}, ${catalogEntryId})
      ON CONFLICT DO NOTHING RETURNING package_id`;
    return rows.length > 0;
  }

  /** True when the stream was in the package. */
  async removeStream(producerWorkspaceId: string, packagePublicId: string, catalogEntryPublicId: string): Promise<boolean> {
    const rows = await this.sql`
      DELETE FROM package_streams ps USING packages p, catalog_entries c
      WHERE ps.package_id = p.id AND ps.catalog_entry_id = c.id
        AND p.producer_workspace_id = ${producerWorkspaceId} AND p.public_id = ${packagePublicId} AND c.public_id = ${catalogEntryPublicId}
      RETURNING ps.package_id`;
    return rows.length > 0;
  }

  /** True when the package was Active. */
  async archive(id: string): Promise<boolean> {
    const rows = await this.sql`UPDATE packages SET status = 'archived', updated_at = now() WHERE id = ${id} AND status = 'Active' RETURNING id`;
    return rows.length > 0;
  }
}
