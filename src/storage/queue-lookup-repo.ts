import type { Sql } from './db.js';
import type { QueueSettings } from '../routing/queue-settings.js';

/** Queue settings by internal id, for delivery and for checks across routes (ingress resolves queues by name instead). */
export class QueueLookupRepo {
  private readonly sql: Sql;
  constructor(sql: Sql) {
    this.sql = sql;
  }

  async settingsOf(queueId: string): Promise<Partial<QueueSettings> | null> {
    const [row] = await this.sql<{ settings: Partial<QueueSettings> }[]>`SELECT settings FROM queues WHERE id = ${queueId}`;
    return row?.settings ?? null;
  }

  /** Settings of the queues routed to a target (for the header collision rules of docs/api.md#ingress). */
  async settingsRoutedTo(targetId: string): Promise<Array<Partial<QueueSettings>>> {
    const rows = await this.sql<{ settings: Partial<QueueSettings> }[]>`
      SELECT q.settings FROM routes r JOIN queues q ON q.id = r.queue_id WHERE r.target_id = ${targetId}`;
    return rows.map((r) => r.settings);
  }
}
