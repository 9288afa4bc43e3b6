import type { Sql } from './db.js';

/** What delivery changes on a target by itself: disabling it (contract §7). */
export class TargetStateRepo {
  constructor(private readonly sql: Sql) {}

  /** Disables the target with a reason its workspace can read; false when it was disabled already. */
  async disable(targetId: string, reason: string): Promise<boolean> {
    const rows = await this.sql`
      UPDATE targets SET disabled_at = now(), disabled_reason = ${reason}
      WHERE id = ${targetId} AND disabled_at IS NULL RETURNING id`;
    return rows.length > 0;
  }
}
