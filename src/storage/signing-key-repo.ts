import { generateKeyPairSync } from 'node:crypto';
import type { Sql } from './db.js';
import { newId, randomBytesPooled } from '../ids.js';
import type { KeyEncryption } from './key-encryption.js';

export type SigningAlgorithm = 'hmac-sha256' | 'ed25519';
export const SIGNING_ALGORITHMS: readonly SigningAlgorithm[] = ['hmac-sha256', 'ed25519'];

/** An HMAC signing key (its secret). */
export interface SigningKey {
  keyId: string;
  secret: string;
  createdAt: Date;
}

/** An ed25519 signing key as made: the public key only (the private one stays encrypted in the database). */
export interface Ed25519KeyMade {
  keyId: string;
  publicKey: string;
  createdAt: Date;
}

/** An active ed25519 key for signing: its private key, still encrypted (AAD: the key id). */
export interface Ed25519KeyStored {
  keyId: string;
  privateKeyEncrypted: string;
}

/** A key as listed: never a secret or a private key. */
export interface SigningKeyListed {
  keyId: string;
  algorithm: SigningAlgorithm;
  /** ed25519: `whpk_<standard base64 of the 32-byte raw public key>`; null for HMAC keys. */
  publicKey: string | null;
  createdAt: Date;
}

/** `whpk_<standard base64 of the raw 32-byte public key>` of an ed25519 public key in SPKI DER (12-byte prefix + 32 bytes). */
export function whpk(spkiDer: Buffer): string {
  return `whpk_${spkiDer.subarray(spkiDer.length - 32).toString('base64')}`;
}

/**
 * A workspace's signing keys (docs/api.md#signing-keys). HMAC keys
 * (`hmac-sha256`) verify signed-request ingress and sign every HMAC header;
 * ed25519 keys sign only the `v1a` entries of Standard Webhooks deliveries, so
 * `active` — what ingress, `hmac` queues and the "no key" pause read — returns
 * HMAC keys only: an ed25519 key is never "the newest key" there.
 */
export class SigningKeyRepo {
  private readonly sql: Sql;
  constructor(sql: Sql) {
    this.sql = sql;
  }

  /** Creates an HMAC key; the secret (256 random bits, base64url) is returned for showing once. */
  async create(workspaceId: string): Promise<SigningKey> {
    const keyId = newId('sig');
    const secret = `whsec_${randomBytesPooled(32).toString('base64url')}`;
    const [row] = await this.sql<{ createdAt: Date }[]>`
      INSERT INTO signing_keys (key_id, workspace_id, secret) VALUES (${keyId}, ${workspaceId}, ${secret})
      RETURNING created_at AS "createdAt"`;
    return { keyId, secret, createdAt: row!.createdAt };
  }

  /** Creates an ed25519 key pair; the private key is stored encrypted and never returned. */
  async createEd25519(workspaceId: string, encryption: KeyEncryption): Promise<Ed25519KeyMade> {
    const keyId = newId('sig');
    const pair = generateKeyPairSync('ed25519');
    const publicKey = whpk(pair.publicKey.export({ format: 'der', type: 'spki' }));
    const pkcs8 = pair.privateKey.export({ format: 'der', type: 'pkcs8' });
    const privateKeyEncrypted = encryption.encrypt(pkcs8, keyId);
    pkcs8.fill(0);
    const [row] = await this.sql<{ createdAt: Date }[]>`
      INSERT INTO signing_keys (key_id, workspace_id, algorithm, public_key, private_key_encrypted)
      VALUES (${keyId}, ${workspaceId}, 'ed25519', ${publicKey}, ${privateKeyEncrypted})
      RETURNING created_at AS "createdAt"`;
    return { keyId, publicKey, createdAt: row!.createdAt };
  }

  /** Active HMAC keys of a workspace, newest first (the first one signs `hmac` deliveries). */
  async active(workspaceId: string): Promise<SigningKey[]> {
    return this.sql<SigningKey[]>`
      SELECT key_id AS "keyId", secret, created_at AS "createdAt"
      FROM signing_keys WHERE workspace_id = ${workspaceId} AND revoked_at IS NULL AND algorithm = 'hmac-sha256'
      ORDER BY created_at DESC, id DESC`;
  }

  /** Active ed25519 keys of a workspace, newest first, their private keys encrypted. */
  async activeEd25519(workspaceId: string): Promise<Ed25519KeyStored[]> {
    return this.sql<Ed25519KeyStored[]>`
      SELECT key_id AS "keyId", private_key_encrypted AS "privateKeyEncrypted"
      FROM signing_keys WHERE workspace_id = ${workspaceId} AND revoked_at IS NULL AND algorithm = 'ed25519'
      ORDER BY created_at DESC, id DESC`;
  }

  /**
   * Rewrites every stored ed25519 private key (revoked ones too) that is
   * encrypted under a previous key encryption key, under the current one (key
   * rotation, docs/operations.md#signing-key-encryption). Keys that decrypt with
   * none of the configured keys are counted and left as they are.
   */
  async reencryptEd25519(encryption: KeyEncryption): Promise<{ rewritten: number; current: number; undecryptable: string[] }> {
    const rows = await this.sql<{ keyId: string; stored: string }[]>`
      SELECT key_id AS "keyId", private_key_encrypted AS stored FROM signing_keys
      WHERE algorithm = 'ed25519' AND private_key_encrypted IS NOT NULL ORDER BY id`;
    const result = { rewritten: 0, current: 0, undecryptable: [] as string[] };
    for (const row of rows) {
      let next: string | null;
      try {
        next = encryption.reencrypt(row.stored, row.keyId);
      } catch {
        result.undecryptable.push(row.keyId);
        continue;
      }
      if (next === null) {
        result.current++;
        continue;
      }
      // Compare-and-set: a concurrent run rewrote it already, or it changed meanwhile.
      const done = await this.sql`UPDATE signing_keys SET private_key_encrypted = ${next} WHERE key_id = ${row.keyId} AND private_key_encrypted = ${row.stored}`;
      if (done.count === 1) result.rewritten++;
      else result.current++;
    }
    return result;
  }

  /** Every active key of a workspace, newest first, as listed (no secret, no private key). */
  async listActive(workspaceId: string): Promise<SigningKeyListed[]> {
    return this.sql<SigningKeyListed[]>`
      SELECT key_id AS "keyId", algorithm, public_key AS "publicKey", created_at AS "createdAt"
      FROM signing_keys WHERE workspace_id = ${workspaceId} AND revoked_at IS NULL
      ORDER BY created_at DESC, id DESC`;
  }

  /**
   * Revokes the workspace's signing key `keyId` (either algorithm); true when this call revoked it.
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
