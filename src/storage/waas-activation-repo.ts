import type { Sql } from './db.js';
import { newId } from '../ids.js';

export type ActivationStatus = 'Active' | 'Revoked';

export interface ActivationRow {
  publicId: string;
  groupKey: string;
  status: ActivationStatus;
}

/**
 * Activations of group keys: the (producer, groupKey, integration) triple an
 * event's group key must match to reach the integration. A revoke keeps the
 * row, so activating again answers the same public id.
 */
export class WaasActivationRepo {
  constructor(private readonly sql: Sql) {}

  /** Activates the triple; `changed` is false when it was already Active. */
  async activate(producerWorkspaceId: string, groupKey: string, integrationId: string): Promise<{ row: ActivationRow; created: boolean; changed: boolean }> {
    const [inserted] = await this.sql<ActivationRow[]>`
      INSERT INTO activations (public_id, producer_workspace_id, group_key, integration_id, status)
      VALUES (${newId('act')}, ${producerWorkspaceId}, ${groupKey}, ${integrationId}, 'Active')
      ON CONFLICT (producer_workspace_id, group_key, integration_id) DO NOTHING
      RETURNING public_id AS "publicId", group_key AS "groupKey", status`;
    if (inserted) return { row: inserted, created: true, changed: true };
    const [reactivated] = await this.sql<ActivationRow[]>`
      UPDATE activations SET status = 'Active', updated_at = now()
      WHERE producer_workspace_id = ${producerWorkspaceId} AND group_key = ${groupKey} AND integration_id = ${integrationId} AND status <> 'Active'
      RETURNING public_id AS "publicId", group_key AS "groupKey", status`;
    if (reactivated) return { row: reactivated, created: false, changed: true };
    const [current] = await this.sql<ActivationRow[]>`
      SELECT public_id AS "publicId", group_key AS "groupKey", status FROM activations
      WHERE producer_workspace_id = ${producerWorkspaceId} AND group_key = ${groupKey} AND integration_id = ${integrationId}`;
    return { row: current!, created: false, changed: false };
  }

  /** Revokes the triple; false when there was nothing Active to revoke. */
  async revoke(producerWorkspaceId: string, groupKey: string, integrationId: string): Promise<boolean> {
    const rows = await this.sql`
      UPDATE activations SET status = 'Revoked', updated_at = now()
      WHERE producer_workspace_id = ${producerWorkspaceId} AND group_key = ${groupKey} AND integration_id = ${integrationId} AND status = 'Active'
      RETURNING id`;
    return rows.length > 0;
  }
}
