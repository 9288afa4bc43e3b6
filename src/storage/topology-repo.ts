import type postgres from 'postgres';
import type { Sql } from './db.js';
import { newId } from '../ids.js';
import type { QueueSettings } from '../routing/queue-settings.js';
import type { TargetSettings } from '../routing/target-settings.js';

export interface WorkspaceRow {
  id: string;
  publicId: string;
  licenseId: string;
  licensePublicId: string;
  archived: boolean;
  isProducer: boolean;
}

export interface QueueRow {
  id: string;
  publicId: string;
  workspaceId: string;
  name: string;
  settings: Partial<QueueSettings>;
  createdAt: Date;
  updatedAt: Date;
}

export interface TargetRow {
  id: string;
  publicId: string;
  workspaceId: string;
  name: string;
  url: string;
  settings: Partial<TargetSettings>;
  disabledAt: Date | null;
  /** Why delivery disabled the target (e.g. a 410), shown to its workspace. */
  disabledReason: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface Upserted<T> {
  row: T;
  created: boolean;
  changed: boolean;
}

/** Workspaces, queues, targets and routes: what a workspace is wired as. */
export class TopologyRepo {
  constructor(private readonly sql: Sql) {}

  async workspaceByPublicId(publicId: string): Promise<WorkspaceRow | null> {
    const [row] = await this.sql<WorkspaceRow[]>`
      SELECT w.id, w.public_id AS "publicId", w.license_id AS "licenseId", l.public_id AS "licensePublicId",
             w.archived, w.is_producer AS "isProducer"
      FROM workspaces w JOIN licenses l ON l.id = w.license_id
      WHERE w.public_id = ${publicId}`;
    return row ?? null;
  }

  async queueByName(workspaceId: string, name: string): Promise<QueueRow | null> {
    const [row] = await this.sql<QueueRow[]>`
      SELECT id, public_id AS "publicId", workspace_id AS "workspaceId", name, settings,
             created_at AS "createdAt", updated_at AS "updatedAt"
      FROM queues WHERE workspace_id = ${workspaceId} AND name = ${name}`;
    return row ?? null;
  }

  /** Inserts or replaces the queue's settings; `changed` is false when nothing differed. */
  async upsertQueue(workspaceId: string, name: string, settings: Partial<QueueSettings>): Promise<Upserted<QueueRow>> {
    return inTransaction(this.sql, async (tx) => {
      const [existing] = await tx<QueueRow[]>`
        SELECT id, settings FROM queues WHERE workspace_id = ${workspaceId} AND name = ${name} FOR UPDATE`;
      if (existing && sameJson(existing.settings, settings)) {
        return { row: (await this.queueByNameTx(tx, workspaceId, name))!, created: false, changed: false };
      }
      const [row] = await tx<QueueRow[]>`
        INSERT INTO queues (public_id, workspace_id, name, settings)
        VALUES (${newId('que')}, ${workspaceId}, ${name}, ${tx.json(settings as never)})
        ON CONFLICT (workspace_id, name) DO UPDATE SET settings = EXCLUDED.settings, updated_at = now()
        RETURNING id, public_id AS "publicId", workspace_id AS "workspaceId", name, settings,
                  created_at AS "createdAt", updated_at AS "updatedAt"`;
      return { row: row!, created: !existing, changed: true };
    });
  }

  private async queueByNameTx(tx: postgres.TransactionSql, workspaceId: string, name: string): Promise<QueueRow | null> {
    const [row] = await tx<QueueRow[]>`
      SELECT id, public_id AS "publicId", workspace_id AS "workspaceId", name, settings,
             created_at AS "createdAt", updated_at AS "updatedAt"
      FROM queues WHERE workspace_id = ${workspaceId} AND name = ${name}`;
    return row ?? null;
  }

  async deleteQueue(workspaceId: string, name: string): Promise<boolean> {
    const rows = await this.sql`DELETE FROM queues WHERE workspace_id = ${workspaceId} AND name = ${name} RETURNING id`;
    return rows.length > 0;
  }

  async targetByName(workspaceId: string, name: string): Promise<TargetRow | null> {
    const [row] = await this.sql<TargetRow[]>`
      SELECT id, public_id AS "publicId", workspace_id AS "workspaceId", name, url, settings,
             disabled_at AS "disabledAt", disabled_reason AS "disabledReason", created_at AS "createdAt", updated_at AS "updatedAt"
      FROM targets WHERE workspace_id = ${workspaceId} AND name = ${name}`;
    return row ?? null;
  }

  async upsertTarget(
    workspaceId: string,
    name: string,
    url: string,
    settings: Partial<TargetSettings>,
  ): Promise<Upserted<TargetRow>> {
    const existing = await this.targetByName(workspaceId, name);
    // Saving a target again re-enables it, even unchanged: the operator has looked at it.
    if (existing && existing.url === url && sameJson(existing.settings, settings) && existing.disabledAt === null) {
      return { row: existing, created: false, changed: false };
    }
    const [row] = await this.sql<TargetRow[]>`
      INSERT INTO targets (public_id, workspace_id, name, url, settings)
      VALUES (${newId('tgt')}, ${workspaceId}, ${name}, ${url}, ${this.sql.json(settings as never)})
      ON CONFLICT (workspace_id, name) DO UPDATE
        SET url = EXCLUDED.url, settings = EXCLUDED.settings, updated_at = now(),
            disabled_at = NULL, disabled_reason = NULL, failing_since = NULL
      RETURNING id, public_id AS "publicId", workspace_id AS "workspaceId", name, url, settings,
                disabled_at AS "disabledAt", disabled_reason AS "disabledReason", created_at AS "createdAt", updated_at AS "updatedAt"`;
    return { row: row!, created: !existing, changed: true };
  }

  async deleteTarget(workspaceId: string, name: string): Promise<boolean> {
    const rows = await this.sql`DELETE FROM targets WHERE workspace_id = ${workspaceId} AND name = ${name} RETURNING id`;
    return rows.length > 0;
  }

  /** Connects a queue to a target; `created` is false when the route existed. */
  async addRoute(queueId: string, targetId: string): Promise<boolean> {
    const rows = await this.sql`
      INSERT INTO routes (queue_id, target_id) VALUES (${queueId}, ${targetId})
      ON CONFLICT DO NOTHING RETURNING queue_id`;
    return rows.length > 0;
  }

  async removeRoute(queueId: string, targetId: string): Promise<boolean> {
    const rows = await this.sql`DELETE FROM routes WHERE queue_id = ${queueId} AND target_id = ${targetId} RETURNING queue_id`;
    return rows.length > 0;
  }

  async routeExists(queueId: string, targetId: string): Promise<boolean> {
    const rows = await this.sql`SELECT 1 FROM routes WHERE queue_id = ${queueId} AND target_id = ${targetId}`;
    return rows.length > 0;
  }

  /** The targets a queue delivers to, for the delivery route table. */
  async targetsOfQueue(queueId: string): Promise<TargetRow[]> {
    return this.sql<TargetRow[]>`
      SELECT t.id, t.public_id AS "publicId", t.workspace_id AS "workspaceId", t.name, t.url, t.settings,
             t.disabled_at AS "disabledAt", t.disabled_reason AS "disabledReason", t.created_at AS "createdAt", t.updated_at AS "updatedAt"
      FROM routes r JOIN targets t ON t.id = r.target_id
      WHERE r.queue_id = ${queueId}
      ORDER BY t.id`;
  }
}

/** Runs `work` in a transaction, or in a savepoint when `sql` is already one. */
function inTransaction<T>(sql: Sql, work: (tx: postgres.TransactionSql) => Promise<T>): Promise<T> {
  const maybeTx = sql as unknown as Partial<postgres.TransactionSql>;
  if (typeof (sql as Partial<Sql>).begin === 'function') return sql.begin(work) as Promise<T>;
  return maybeTx.savepoint!(work) as Promise<T>;
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(sortKeys(a)) === JSON.stringify(sortKeys(b));
}

function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v && typeof v === 'object') {
    return Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, x]) => [k, sortKeys(x)]));
  }
  return v;
}
