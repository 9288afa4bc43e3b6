import type { Sql } from './db.js';
import { newId, randomBytesPooled } from '../ids.js';

export interface SigningKey {
  keyId: string;
  secret: string;
  createdAt: Date;
}

/** A workspace's HMAC signing keys (docs/api.md#authentication). */
export class SigningKeyRepo {
  constructor(private readonly sql: Sql) {}

  /** Creates a key; the secret (256 random bits, base64url) is returned for showing once. */
  async create(workspaceId: string): Promise<SigningKey> {
    const keyId = newId('sig');
    const secret = `whsec_${randomBytesPooled(32).toString('base64url')}`;
    const [row] = await this.sql<{ createdAt: Date }[]>`
      INSERT INTO signing_keys (key_id, workspace_id, secret) VALUES (${keyId}, ${workspaceId}, ${secret})
      RETURNING created_at AS "createdAt"`;
    return { keyId, secret, createdAt: row!.createdAt };
  }

  /** Active keys of a workspace, newest first (the first one signs outbound deliveries). */
  async active(workspaceId: string): Promise<SigningKey[]> {
    return this.sql<SigningKey[]>`
      SELECT key_id AS "keyId", secret, created_at AS "createdAt"
      FROM signing_keys WHERE workspace_id = ${workspaceId} AND revoked_at IS NULL
      ORDER BY created_at DESC, id DESC`;
  }

  /**
   * Revokes the workspace's signing key `keyId`; true when this call revoked it.
   * A key of another workspace, an unknown id or one revoked before: false, nothing changes.
   */
  async revoke(workspaceId: string, keyId: string): Promise<boolean> {
    const rows = await this.sql`
      UPDATE signing_keys SET revoked_at = now()
      WHERE workspace_id = ${workspaceId} AND key_id = ${keyId} AND revoked_at IS NULL
      RETURNING key_id`;
    return rows.length > 0;
  }
}
