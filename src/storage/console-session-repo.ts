import type { Sql } from './db.js';
import type { MemberRole } from './membership-repo.js';

export type SessionKind = 'key' | 'link' | 'oidc';

/** A console session as stored (the id itself never is: only its hash). */
export interface StoredSession {
  id: string;
  kind: SessionKind;
  subject: string;
  email: string | null;
  keyId: string | null;
  workspaceId: string | null;
  role: MemberRole | null;
  expiresAt: Date;
}

export interface NewSession {
  kind: SessionKind;
  subject: string;
  email?: string | null;
  keyId?: string | null;
  workspaceId?: string | null;
  role?: MemberRole | null;
  ttlSeconds: number;
}

/** A workspace as the session body lists it. */
export interface SessionWorkspace {
  id: string;
  tenantPublicId: string;
  licenseId: string;
  licensePublicId: string;
  name: string;
}

/** Console sessions and one-time sign-in links, looked up by the SHA-256 of their token. */
export class ConsoleSessionRepo {
  private readonly sql: Sql;
  constructor(sql: Sql) {
    this.sql = sql;
  }

  async create(tokenHash: Buffer, s: NewSession): Promise<StoredSession> {
    // Expired rows are only ever refused: drop those a day past their end now and then.
    if (Math.random() < 0.05) await this.sql`DELETE FROM console_sessions WHERE expires_at < now() - interval '1 day'`;
    const [row] = await this.sql<StoredSession[]>`
      INSERT INTO console_sessions (token_hash, kind, subject, email, key_id, workspace_id, role, expires_at)
      VALUES (${tokenHash}, ${s.kind}, ${s.subject}, ${s.email ?? null}, ${s.keyId ?? null}, ${s.workspaceId ?? null}, ${s.role ?? null},
              now() + make_interval(secs => ${s.ttlSeconds}))
      RETURNING ${this.columns()}`;
    return row!;
  }

  /** The live session of this token hash: not expired (by the database's clock), not revoked. */
  async live(tokenHash: Buffer): Promise<StoredSession | null> {
    const [row] = await this.sql<StoredSession[]>`
      SELECT ${this.columns()} FROM console_sessions
      WHERE token_hash = ${tokenHash} AND revoked_at IS NULL AND expires_at > now()`;
    return row ?? null;
  }

  /** Ends the session of this token hash; true when it was live. */
  async revoke(tokenHash: Buffer): Promise<boolean> {
    const rows = await this.sql`
      UPDATE console_sessions SET revoked_at = now()
      WHERE token_hash = ${tokenHash} AND revoked_at IS NULL RETURNING id`;
    return rows.length > 0;
  }

  async createLink(tokenHash: Buffer, workspaceId: string, role: MemberRole, ttlSeconds: number): Promise<Date> {
    const [row] = await this.sql<{ expiresAt: Date }[]>`
      INSERT INTO console_links (token_hash, workspace_id, role, expires_at)
      VALUES (${tokenHash}, ${workspaceId}, ${role}, now() + make_interval(secs => ${ttlSeconds}))
      RETURNING expires_at AS "expiresAt"`;
    return row!.expiresAt;
  }

  /**
   * Uses the link of this token hash up, in one statement (two browsers
   * racing with the same link: one wins). Null when unknown, used or expired.
   */
  async consumeLink(tokenHash: Buffer): Promise<{ workspaceId: string; role: MemberRole } | null> {
    const [row] = await this.sql<{ workspaceId: string; role: MemberRole }[]>`
      UPDATE console_links SET used_at = now()
      WHERE token_hash = ${tokenHash} AND used_at IS NULL AND expires_at > now()
      RETURNING workspace_id AS "workspaceId", role`;
    return row ?? null;
  }

  /** The license's workspaces, or the one workspace when `workspaceId` is set. */
  async workspacesOfLicense(licenseId: string, workspaceId: string | null): Promise<SessionWorkspace[]> {
    return this.sql<SessionWorkspace[]>`
      SELECT w.id, w.public_id AS "tenantPublicId", w.license_id AS "licenseId", l.public_id AS "licensePublicId", w.name
      FROM workspaces w JOIN licenses l ON l.id = w.license_id
      WHERE w.license_id = ${licenseId} AND (${workspaceId}::bigint IS NULL OR w.id = ${workspaceId})
      ORDER BY w.id`;
  }

  async workspace(workspaceId: string): Promise<SessionWorkspace | null> {
    const [row] = await this.sql<SessionWorkspace[]>`
      SELECT w.id, w.public_id AS "tenantPublicId", w.license_id AS "licenseId", l.public_id AS "licensePublicId", w.name
      FROM workspaces w JOIN licenses l ON l.id = w.license_id WHERE w.id = ${workspaceId}`;
    return row ?? null;
  }

  /** The workspaces a console subject is a member of, with the role. */
  async memberships(subject: string): Promise<Array<SessionWorkspace & { role: MemberRole }>> {
    return this.sql<Array<SessionWorkspace & { role: MemberRole }>>`
      SELECT w.id, w.public_id AS "tenantPublicId", w.license_id AS "licenseId", l.public_id AS "licensePublicId", w.name, m.role
      FROM memberships m JOIN workspaces w ON w.id = m.workspace_id JOIN licenses l ON l.id = w.license_id
      WHERE m.subject = ${subject} ORDER BY w.id`;
  }

  private columns() {
    return this.sql`id, kind, subject, email, key_id AS "keyId", workspace_id AS "workspaceId", role, expires_at AS "expiresAt"`;
  }
}
