import type { Sql } from './db.js';

/** What delivery changes on a target by itself: its failure streak and disabling it (docs/delivery.md#delivery-engine). */
export class TargetStateRepo {
  private readonly sql: Sql;
  constructor(sql: Sql) {
    this.sql = sql;
  }

  /**
   * Disables the target with a reason its workspace can read; false when it
   * was disabled already. Its failure streak ends here: once re-enabled, it
   * gets the full time again.
   */
  async disable(targetId: string, reason: string): Promise<boolean> {
    const rows = await this.sql`
      UPDATE targets SET disabled_at = now(), disabled_reason = ${reason}, failing_since = NULL
      WHERE id = ${targetId} AND disabled_at IS NULL RETURNING id`;
    return rows.length > 0;
  }

  /** Starts the target's failure streak unless one runs; returns when the streak (cluster-wide) began. */
  async failing(targetId: string): Promise<Date | null> {
    const [row] = await this.sql<{ since: Date }[]>`
      UPDATE targets SET failing_since = COALESCE(failing_since, now())
      WHERE id = ${targetId} RETURNING failing_since AS since`;
    return row?.since ?? null;
  }

  /** Ends the target's failure streak: it answered 2xx. */
  async healthy(targetId: string): Promise<void> {
    await this.sql`UPDATE targets SET failing_since = NULL WHERE id = ${targetId} AND failing_since IS NOT NULL`;
  }
}
