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

/** A route as the route list shows it. */
export interface RouteRow {
  queue: string;
  queuePublicId: string;
  target: string;
  targetPublicId: string;
  createdAt: Date;
}

export interface Upserted<T> {
  row: T;
  created: boolean;
  changed: boolean;
}

/** Workspaces, queues, targets and routes: what a workspace is wired as. */
/** The columns a QueueRow is read from, for RETURNING clauses. */
const QUEUE_COLUMNS = `id, public_id AS "publicId", workspace_id AS "workspaceId", name, settings, created_at AS "createdAt", updated_at AS "updatedAt"`;

export class TopologyRepo {
  private readonly sql: Sql;
  constructor(sql: Sql) {
    this.sql = sql;
  }

  /**
   * A target's settings as the rest of the code sees them: the `settings` JSON
   * with the flow-control columns (migration 060) added as keys when set.
   */
  private targetSettings(joined: boolean) {
    return joined
      ? this.sql`t.settings || jsonb_strip_nulls(jsonb_build_object('maxConcurrency', t.max_concurrency, 'maxRatePerSecond', t.max_rate_per_second)) AS settings`
      : this.sql`settings || jsonb_strip_nulls(jsonb_build_object('maxConcurrency', max_concurrency, 'maxRatePerSecond', max_rate_per_second)) AS settings`;
  }

  /** A workspace's name and settings (the row the workspace API shows). */
  /** Name, settings and the workspace's own retention (hours; null: the service's retention.hours). */
  async workspaceDetails(id: string): Promise<{ name: string; settings: Record<string, unknown>; retentionHours: number | null }> {
    const [row] = await this.sql<Array<{ name: string; settings: Record<string, unknown>; retentionHours: number | null }>>`
      SELECT name, settings, retention_hours::float8 AS "retentionHours" FROM workspaces WHERE id = ${id}`;
    return row ?? { name: '', settings: {}, retentionHours: null };
  }

  /** Sets (or, null, removes) the workspace's own retention; true when that changed something. */
  async setWorkspaceRetentionHours(id: string, hours: number | null): Promise<boolean> {
    const rows = await this.sql`
      UPDATE workspaces SET retention_hours = ${hours} WHERE id = ${id} AND retention_hours IS DISTINCT FROM ${hours}::numeric RETURNING id`;
    return rows.length > 0;
  }

  /** Archives or restores a workspace; true when that changed something. */
  async setWorkspaceArchived(id: string, archived: boolean): Promise<boolean> {
    const rows = await this.sql`UPDATE workspaces SET archived = ${archived} WHERE id = ${id} AND archived <> ${archived} RETURNING id`;
    return rows.length > 0;
  }

  /**
   * Merges `set` into the workspace's settings and removes `unset` keys, in
   * one statement; true when the stored settings changed.
   */
  async updateWorkspaceSettings(id: string, set: Record<string, unknown>, unset: readonly string[]): Promise<boolean> {
    const rows = await this.sql`
      UPDATE workspaces SET settings = (settings || ${this.sql.json(set as never)}) - ${this.sql.array([...unset])}::text[]
      WHERE id = ${id} AND settings IS DISTINCT FROM ((settings || ${this.sql.json(set as never)}) - ${this.sql.array([...unset])}::text[])
      RETURNING id`;
    return rows.length > 0;
  }

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
      SELECT id, public_id AS "publicId", workspace_id AS "workspaceId", name, url, ${this.targetSettings(false)},
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
    // The flow-control ceilings live in columns of their own (migration 060); the rest in `settings`.
    const { maxConcurrency, maxRatePerSecond, ...rest } = settings;
    const [row] = await this.sql<TargetRow[]>`
      INSERT INTO targets (public_id, workspace_id, name, url, settings, max_concurrency, max_rate_per_second)
      VALUES (${newId('tgt')}, ${workspaceId}, ${name}, ${url}, ${this.sql.json(rest as never)}, ${maxConcurrency ?? null}, ${maxRatePerSecond ?? null})
      ON CONFLICT (workspace_id, name) DO UPDATE
        SET url = EXCLUDED.url, settings = EXCLUDED.settings, updated_at = now(),
            max_concurrency = EXCLUDED.max_concurrency, max_rate_per_second = EXCLUDED.max_rate_per_second,
            disabled_at = NULL, disabled_reason = NULL, failing_since = NULL
      RETURNING id, public_id AS "publicId", workspace_id AS "workspaceId", name, url, ${this.targetSettings(false)},
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

  /** Every queue of the workspace (archived ones too), by name. */
  async listQueues(workspaceId: string): Promise<QueueRow[]> {
    return this.sql<QueueRow[]>`
      SELECT id, public_id AS "publicId", workspace_id AS "workspaceId", name, settings,
             created_at AS "createdAt", updated_at AS "updatedAt"
      FROM queues WHERE workspace_id = ${workspaceId} ORDER BY name`;
  }

  /**
   * Archives a queue or restores it, keeping every other setting (write-only
   * ones included, which a PUT cannot resend). `changed` is false when it
   * already was so; null when there is no such queue.
   */
  async setQueueArchived(workspaceId: string, name: string, archived: boolean): Promise<{ row: QueueRow; changed: boolean } | null> {
    const [row] = archived
      ? await this.sql<QueueRow[]>`
          UPDATE queues SET settings = settings || '{"archived": true}'::jsonb, updated_at = now()
          WHERE workspace_id = ${workspaceId} AND name = ${name} AND (settings->>'archived')::boolean IS NOT TRUE
          RETURNING ${this.sql.unsafe(QUEUE_COLUMNS)}`
      : await this.sql<QueueRow[]>`
          UPDATE queues SET settings = settings - 'archived', updated_at = now()
          WHERE workspace_id = ${workspaceId} AND name = ${name} AND (settings->>'archived')::boolean IS TRUE
          RETURNING ${this.sql.unsafe(QUEUE_COLUMNS)}`;
    if (row) return { row, changed: true };
    const existing = await this.queueByName(workspaceId, name);
    return existing ? { row: existing, changed: false } : null;
  }

  /** Every target of the workspace (disabled ones with why), by name. */
  async listTargets(workspaceId: string): Promise<TargetRow[]> {
    return this.sql<TargetRow[]>`
      SELECT id, public_id AS "publicId", workspace_id AS "workspaceId", name, url, ${this.targetSettings(false)},
             disabled_at AS "disabledAt", disabled_reason AS "disabledReason", created_at AS "createdAt", updated_at AS "updatedAt"
      FROM targets WHERE workspace_id = ${workspaceId} ORDER BY name`;
  }

  /**
   * Re-enables a target delivery disabled (a 410, or failing for days); its
   * failure streak starts afresh. Null when there is no such target;
   * `changed` is false when it was enabled.
   */
  async enableTarget(workspaceId: string, name: string): Promise<{ row: TargetRow; changed: boolean } | null> {
    const [row] = await this.sql<TargetRow[]>`
      UPDATE targets SET disabled_at = NULL, disabled_reason = NULL, failing_since = NULL, updated_at = now()
      WHERE workspace_id = ${workspaceId} AND name = ${name} AND disabled_at IS NOT NULL
      RETURNING id, public_id AS "publicId", workspace_id AS "workspaceId", name, url, ${this.targetSettings(false)},
                disabled_at AS "disabledAt", disabled_reason AS "disabledReason", created_at AS "createdAt", updated_at AS "updatedAt"`;
    if (row) return { row, changed: true };
    const existing = await this.targetByName(workspaceId, name);
    return existing ? { row: existing, changed: false } : null;
  }

  /** Every route of the workspace, by queue then target name. */
  async listRoutes(workspaceId: string): Promise<RouteRow[]> {
    return this.sql<RouteRow[]>`
      SELECT q.name AS queue, q.public_id AS "queuePublicId", t.name AS target, t.public_id AS "targetPublicId", r.created_at AS "createdAt"
      FROM routes r JOIN queues q ON q.id = r.queue_id JOIN targets t ON t.id = r.target_id
      WHERE q.workspace_id = ${workspaceId}
      ORDER BY q.name, t.name`;
  }

  /** The targets a queue delivers to, for the delivery route table. */
  async targetsOfQueue(queueId: string): Promise<TargetRow[]> {
    return this.sql<TargetRow[]>`
      SELECT t.id, t.public_id AS "publicId", t.workspace_id AS "workspaceId", t.name, t.url, ${this.targetSettings(true)},
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
