import type { Sql } from './db.js';
import type { KeyProfile } from '../auth/api-key.js';

/** What authentication needs to know about a stored API key. */
export interface StoredKey {
  keyId: string;
  licenseId: string;
  licensePublicId: string;
  workspaceId: string | null;
  workspacePublicId: string | null;
  profile: KeyProfile;
  secretHash: Buffer;
  queueScopes: string[] | null;
  revoked: boolean;
}

export class KeyRepo {
  constructor(private readonly sql: Sql) {}

  async byKeyId(keyId: string): Promise<StoredKey | null> {
    const [row] = await this.sql<StoredKey[]>`
      SELECT k.key_id AS "keyId", k.license_id AS "licenseId", l.public_id AS "licensePublicId",
             k.workspace_id AS "workspaceId", w.public_id AS "workspacePublicId", k.profile,
             k.secret_hash AS "secretHash", k.queue_scopes AS "queueScopes", (k.revoked_at IS NOT NULL) AS revoked
      FROM api_keys k
      JOIN licenses l ON l.id = k.license_id
      LEFT JOIN workspaces w ON w.id = k.workspace_id
      WHERE k.key_id = ${keyId}`;
    return row ?? null;
  }
}
