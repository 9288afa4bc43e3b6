import type { Sql } from './db.js';

export type MemberRole = 'Owner' | 'Admin' | 'Member';
export const MEMBER_ROLES: readonly MemberRole[] = ['Owner', 'Admin', 'Member'];

/** Console users' roles on workspaces: the `sub` of a console token → Owner, Admin or Member. */
export class MembershipRepo {
  private readonly sql: Sql;
  constructor(sql: Sql) {
    this.sql = sql;
  }

  async role(workspaceId: string, subject: string): Promise<MemberRole | null> {
    const [row] = await this.sql<{ role: MemberRole }[]>`
      SELECT role FROM memberships WHERE workspace_id = ${workspaceId} AND subject = ${subject}`;
    return row?.role ?? null;
  }

  /** True when the subject is Owner or Admin of any workspace of the license ("an account it administers"). */
  async administersLicense(licenseId: string, subject: string): Promise<boolean> {
    const rows = await this.sql`
      SELECT 1 FROM memberships m JOIN workspaces w ON w.id = m.workspace_id
      WHERE w.license_id = ${licenseId} AND m.subject = ${subject} AND m.role IN ('Owner', 'Admin') LIMIT 1`;
    return rows.length > 0;
  }

  /** True when the subject is Owner of any workspace of the license: it may create workspaces in it. */
  async ownsLicense(licenseId: string, subject: string): Promise<boolean> {
    const rows = await this.sql`
      SELECT 1 FROM memberships m JOIN workspaces w ON w.id = m.workspace_id
      WHERE w.license_id = ${licenseId} AND m.subject = ${subject} AND m.role = 'Owner' LIMIT 1`;
    return rows.length > 0;
  }

  /** The license's id and the ids of its workspaces the subject has a role on (any role); null when none. */
  async workspacesInLicense(licensePublicId: string, subject: string): Promise<{ licenseId: string; workspaceIds: string[] } | null> {
    const rows = await this.sql<{ licenseId: string; workspaceId: string }[]>`
      SELECT l.id::text AS "licenseId", w.id::text AS "workspaceId"
      FROM licenses l JOIN workspaces w ON w.license_id = l.id JOIN memberships m ON m.workspace_id = w.id
      WHERE l.public_id = ${licensePublicId} AND m.subject = ${subject}`;
    if (rows.length === 0) return null;
    return { licenseId: rows[0]!.licenseId, workspaceIds: rows.map((r) => r.workspaceId) };
  }

  async grant(workspaceId: string, subject: string, role: MemberRole): Promise<void> {
    await this.sql`
      INSERT INTO memberships (workspace_id, subject, role) VALUES (${workspaceId}, ${subject}, ${role})
      ON CONFLICT (workspace_id, subject) DO UPDATE SET role = EXCLUDED.role`;
  }
}
