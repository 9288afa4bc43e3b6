import type { Sql } from './db.js';
import { newId } from '../ids.js';
import { generateApiKey, type KeyProfile } from '../auth/api-key.js';

export interface CreatedKey {
  keyId: string;
  wire: string;
}

/** Licenses, workspaces and API keys: the ownership side of the schema. */
export class LicenseRepo {
  private readonly sql: Sql;
  constructor(sql: Sql) {
    this.sql = sql;
  }

  async createLicense(email: string): Promise<{ id: string; publicId: string }> {
    const publicId = newId('lic');
    const [row] = await this.sql<{ id: string }[]>`
      INSERT INTO licenses (public_id, email) VALUES (${publicId}, ${email}) RETURNING id`;
    return { id: row!.id, publicId };
  }

  async createWorkspace(licenseId: string, name: string): Promise<{ id: string; publicId: string }> {
    const publicId = newId('ten');
    const [row] = await this.sql<{ id: string }[]>`
      INSERT INTO workspaces (public_id, license_id, name) VALUES (${publicId}, ${licenseId}, ${name}) RETURNING id`;
    return { id: row!.id, publicId };
  }

  /** The license's workspaces (archived ones too), oldest first; `workspaceIds` limits them (null: all). */
  async listWorkspaces(licenseId: string, workspaceIds: readonly string[] | null): Promise<Array<{ publicId: string; name: string; archived: boolean; createdAt: Date }>> {
    return this.sql<Array<{ publicId: string; name: string; archived: boolean; createdAt: Date }>>`
      SELECT public_id AS "publicId", name, archived, created_at AS "createdAt"
      FROM workspaces WHERE license_id = ${licenseId}
        ${workspaceIds === null ? this.sql`` : this.sql`AND id = ANY(${[...workspaceIds]}::bigint[])`}
      ORDER BY created_at, id`;
  }

  /** Creates a key; the returned wire form is the only time the secret exists outside the caller. */
  async createKey(opts: {
    licenseId: string;
    workspaceId: string | null;
    profile: KeyProfile;
    name?: string;
    queueScopes?: string[] | null;
  }): Promise<CreatedKey> {
    const key = generateApiKey();
    await this.sql`
      INSERT INTO api_keys (key_id, license_id, workspace_id, profile, secret_hash, queue_scopes, name)
      VALUES (${key.keyId}, ${opts.licenseId}, ${opts.workspaceId}, ${opts.profile}, ${key.secretHash},
              ${opts.queueScopes ?? null}, ${opts.name ?? null})`;
    return { keyId: key.keyId, wire: key.wire };
  }
}
