import type { Sql } from './db.js';
import { newId } from '../ids.js';

export type ActivationStatus = 'Active' | 'Revoked';

export interface ActivationRow {
  publicId: string;
  groupKey: string;
  status: ActivationStatus;
}

/** An activation as listed, with the integration it opens the gate for. */
export interface ListedActivation extends ActivationRow {
  integrationPublicId: string;
}

/**
 * Activations of group keys: the (producer, groupKey, integration) triple an
 * event's group key must match to reach the integration. A revoke keeps the
 * row, so activating again answers the same public id.
 */
export class WaasActivationRepo {
  private readonly sql: Sql;
  constructor(sql: Sql) {
    this.sql = sql;
  }

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

  /** The producer's activations (Revoked ones included: their status says so), by group key. */
  async list(producerWorkspaceId: string, filter: { groupKey?: string; integrationId?: string }): Promise<ListedActivation[]> {
    return this.sql<ListedActivation[]>`
      SELECT a.public_id AS "publicId", a.group_key AS "groupKey", a.status, i.public_id AS "integrationPublicId"
      FROM activations a JOIN integrations i ON i.id = a.integration_id
      WHERE a.producer_workspace_id = ${producerWorkspaceId}
        ${filter.groupKey === undefined ? this.sql`` : this.sql`AND a.group_key = ${filter.groupKey}`}
        ${filter.integrationId === undefined ? this.sql`` : this.sql`AND a.integration_id = ${filter.integrationId}`}
      ORDER BY a.group_key, a.id`;
  }
}
