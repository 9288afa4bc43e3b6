import type { Sql } from './db.js';
import type { ActivityEntry, ActivityKind } from '../activity/activity-kinds.js';

/** A row of the activity feed as read back. */
export interface ActivityRow extends ActivityEntry {
  id: string;
  at: Date;
}

/**
 * The workspace activity feed (migration 110): one row per thing a person or
 * delivery did to the workspace. Written once per action, where it happens;
 * read newest first, keyset on the id. Kept for retention.hours like the
 * records (the retention sweep deletes older rows in batches).
 */
export class ActivityRepo {
  private readonly sql: Sql;
  constructor(sql: Sql) {
    this.sql = sql;
  }

  async record(workspaceId: string, entry: ActivityEntry): Promise<void> {
    await this.sql`
      INSERT INTO activity (workspace_id, kind, actor, subject, detail)
      VALUES (${workspaceId}, ${entry.kind}, ${entry.actor}, ${entry.subject}, ${entry.detail})`;
  }

  /** For callers that know the target only (delivery): the workspace is the target's. */
  async recordForTarget(targetId: string, entry: Omit<ActivityEntry, 'subject'>): Promise<void> {
    await this.sql`
      INSERT INTO activity (workspace_id, kind, actor, subject, detail)
      SELECT workspace_id, ${entry.kind}, ${entry.actor}, name, ${entry.detail} FROM targets WHERE id = ${targetId}`;
  }

  /** Up to `limit` entries older than `beforeId` (null: the newest), newest first. */
  async page(workspaceId: string, beforeId: string | null, limit: number, kinds?: readonly ActivityKind[]): Promise<ActivityRow[]> {
    return this.sql<ActivityRow[]>`
      SELECT id::text, at, kind, actor, subject, detail FROM activity
      WHERE workspace_id = ${workspaceId}
        ${beforeId === null ? this.sql`` : this.sql`AND id < ${beforeId}::bigint`}
        ${kinds && kinds.length > 0 ? this.sql`AND kind = ANY(${[...kinds]}::text[])` : this.sql``}
      ORDER BY activity.id DESC LIMIT ${limit}`;
  }
}
