import type { Sql } from './db.js';
import type { QueueSettings } from '../routing/queue-settings.js';

/** Everything ingress needs about `/events/{tenant}/{queue}`, in one row. */
export interface IngressQueueRow {
  workspaceId: string;
  licenseId: string;
  workspaceArchived: boolean;
  /** The workspace's own settings (jsonb); ingress reads `ingress` defaults from it. */
  workspaceSettings: Record<string, unknown> | null;
  queueId: string;
  queuePublicId: string;
  queueName: string;
  settings: Partial<QueueSettings>;
}

/** The one read of the ingress hot path's cache misses: workspace and queue in a single query. */
export class IngressRepo {
  private readonly sql: Sql;
  constructor(sql: Sql) {
    this.sql = sql;
  }

  async queue(tenantPublicId: string, queueName: string): Promise<IngressQueueRow | null> {
    const [row] = await this.sql<IngressQueueRow[]>`
      SELECT w.id AS "workspaceId", w.license_id AS "licenseId", w.archived AS "workspaceArchived",
             w.settings AS "workspaceSettings",
             q.id AS "queueId", q.public_id AS "queuePublicId", q.name AS "queueName", q.settings
      FROM workspaces w JOIN queues q ON q.workspace_id = w.id AND q.name = ${queueName}
      WHERE w.public_id = ${tenantPublicId}`;
    return row ?? null;
  }
}
