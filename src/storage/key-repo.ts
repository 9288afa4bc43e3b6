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
  private readonly sql: Sql;
  constructor(sql: Sql) {
    this.sql = sql;
  }

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

  /** The workspace's keys, newest first, revoked ones included (with when); never a secret or its hash. */
  async list(workspaceId: string): Promise<KeyListing[]> {
    return this.sql<KeyListing[]>`
      SELECT key_id AS "keyId", name, profile, queue_scopes AS "queueScopes", created_at AS "createdAt",
             last_used_at AS "lastUsedAt", revoked_at AS "revokedAt"
      FROM api_keys WHERE workspace_id = ${workspaceId}
      ORDER BY created_at DESC, id DESC`;
  }

  /**
   * The license's keys that are not revoked, newest first, with the workspace
   * each is scoped to (null: every workspace of the license). `workspaceIds`
   * limits the list to keys of those workspaces (a caller who reaches only
   * some); null lists them all. Never a secret or its hash.
   */
  async listForLicense(licenseId: string, workspaceIds: readonly string[] | null): Promise<LicenseKeyListing[]> {
    return this.sql<LicenseKeyListing[]>`
      SELECT k.key_id AS "keyId", k.name, k.profile, k.queue_scopes AS "queueScopes", w.public_id AS "tenantPublicId",
             k.created_at AS "createdAt", k.last_used_at AS "lastUsedAt"
      FROM api_keys k LEFT JOIN workspaces w ON w.id = k.workspace_id
      WHERE k.license_id = ${licenseId} AND k.revoked_at IS NULL
        ${workspaceIds === null ? this.sql`` : this.sql`AND k.workspace_id = ANY(${[...workspaceIds]}::bigint[])`}
      ORDER BY k.created_at DESC, k.id DESC`;
  }

  /** The profile of the workspace's key `keyId`, or null when the workspace has no such key. */
  async profileOf(workspaceId: string, keyId: string): Promise<KeyProfile | null> {
    const [row] = await this.sql<{ profile: KeyProfile }[]>`SELECT profile FROM api_keys WHERE workspace_id = ${workspaceId} AND key_id = ${keyId}`;
    return row?.profile ?? null;
  }

  /** Revokes the workspace's key `keyId`; true when this call revoked it (false: unknown, another workspace's, or revoked before). */
  async revoke(workspaceId: string, keyId: string): Promise<boolean> {
    const rows = await this.sql`
      UPDATE api_keys SET revoked_at = now()
      WHERE workspace_id = ${workspaceId} AND key_id = ${keyId} AND revoked_at IS NULL
      RETURNING key_id`;
    return rows.length > 0;
  }

  /** Marks these keys used now (the key list's lastUsedAt; see KeyUsage). */
  async touch(keyIds: string[]): Promise<void> {
    await this.sql`UPDATE api_keys SET last_used_at = now() WHERE key_id = ANY(${keyIds})`;
  }

  /** Revokes a key by id alone (the operator's CLI); true when this call revoked it. */
  async revokeAnywhere(keyId: string): Promise<boolean> {
    const rows = await this.sql`UPDATE api_keys SET revoked_at = now() WHERE key_id = ${keyId} AND revoked_at IS NULL RETURNING key_id`;
    return rows.length > 0;
  }
}

/** A key as the key list shows it. */
export interface KeyListing {
  keyId: string;
  name: string | null;
  profile: KeyProfile;
  queueScopes: string[] | null;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

/** A key as the license's key list shows it. */
export interface LicenseKeyListing {
  keyId: string;
  name: string | null;
  profile: KeyProfile;
  queueScopes: string[] | null;
  tenantPublicId: string | null;
  createdAt: Date;
  lastUsedAt: Date | null;
}
