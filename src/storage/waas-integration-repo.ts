import type { Sql } from './db.js';
import { newId } from '../ids.js';
import { LicenseRepo } from './license-repo.js';
import type { WorkspaceRow } from './topology-repo.js';

export type IntegrationStatus = 'Pending' | 'Active';

export interface IntegrationRow {
  id: string;
  publicId: string;
  producerWorkspaceId: string;
  producerTenantPublicId: string;
  invitedEmail: string;
  status: IntegrationStatus;
  inviteTokenHash: Buffer;
  receivingWorkspaceId: string | null;
  receivingTenantPublicId: string | null;
}

/** Where an accepted integration's receiving workspace comes from (docs/api.md#producer-api-waas). */
export type AcceptInto =
  | { kind: 'workspace'; workspaceId: string }
  | { kind: 'new-workspace'; licenseId: string }
  | { kind: 'new-account'; email: string };

export interface Accepted {
  receivingWorkspaceId: string;
  receivingTenantPublicId: string;
  licensePublicId: string;
  /** Only when a new account was made: its Build key, shown once. */
  buildKey?: string;
}

export interface SubscriptionRow {
  id: string;
  publicId: string;
  integrationId: string;
  catalogEntryId: string;
  catalogEntryPublicId: string;
  receivingQueueId: string | null;
  receivingQueueName: string | null;
}

const INTEGRATION_SELECT = `
  SELECT i.id, i.public_id AS "publicId", i.producer_workspace_id AS "producerWorkspaceId",
         pw.public_id AS "producerTenantPublicId", i.invited_email AS "invitedEmail", i.status,
         i.invite_token_hash AS "inviteTokenHash", i.receiving_workspace_id AS "receivingWorkspaceId",
         rw.public_id AS "receivingTenantPublicId"
  FROM integrations i
  JOIN workspaces pw ON pw.id = i.producer_workspace_id
  LEFT JOIN workspaces rw ON rw.id = i.receiving_workspace_id`;

const SUBSCRIPTION_SELECT = `
  SELECT s.id, s.public_id AS "publicId", s.integration_id AS "integrationId", s.catalog_entry_id AS "catalogEntryId",
         c.public_id AS "catalogEntryPublicId", s.receiving_queue_id AS "receivingQueueId", q.name AS "receivingQueueName"
  FROM subscriptions s
  JOIN catalog_entries c ON c.id = s.catalog_entry_id
  LEFT JOIN queues q ON q.id = s.receiving_queue_id`;

/** Integrations (a producer's partners) and their subscriptions to streams. */
export class WaasIntegrationRepo {
  private readonly sql: Sql;
  constructor(sql: Sql) {
    this.sql = sql;
  }

  /**
   * Invites `email`. A Pending invitation to the same address is re-issued
   * (same integration, new token: the old one stops working) rather than
   * duplicated; an accepted one is never touched.
   */
  async invite(producerWorkspaceId: string, email: string, tokenHash: Buffer): Promise<{ row: IntegrationRow; created: boolean }> {
    return this.sql.begin(async (tx) => {
      await tx`SELECT id FROM workspaces WHERE id = ${producerWorkspaceId} FOR UPDATE`;
      const [pending] = await tx<{ id: string }[]>`
        SELECT id FROM integrations WHERE producer_workspace_id = ${producerWorkspaceId} AND invited_email = ${email} AND status = 'Pending'
        ORDER BY id LIMIT 1`;
      let id: string;
      if (pending) {
        await tx`UPDATE integrations SET invite_token_hash = ${tokenHash} WHERE id = ${pending.id}`;
        id = pending.id;
      } else {
        const [row] = await tx<{ id: string }[]>`
          INSERT INTO integrations (public_id, producer_workspace_id, invited_email, status, invite_token_hash)
          VALUES (${newId('int')}, ${producerWorkspaceId}, ${email}, 'Pending', ${tokenHash}) RETURNING id`;
        id = row!.id;
      }
      const [row] = await tx.unsafe<IntegrationRow[]>(`${INTEGRATION_SELECT} WHERE i.id = $1`, [id]);
      return { row: row!, created: !pending };
    });
  }

  async byPublicId(publicId: string): Promise<IntegrationRow | null> {
    const [row] = await this.sql.unsafe<IntegrationRow[]>(`${INTEGRATION_SELECT} WHERE i.public_id = $1`, [publicId]);
    return row ?? null;
  }

  async ofProducer(producerWorkspaceId: string): Promise<IntegrationRow[]> {
    return this.sql.unsafe<IntegrationRow[]>(`${INTEGRATION_SELECT} WHERE i.producer_workspace_id = $1 ORDER BY i.id`, [producerWorkspaceId]);
  }

  /**
   * The accepted integrations received into workspaces of one license, oldest
   * first; `workspaceIds` narrows them to those workspaces (null: all of them).
   */
  async receivedInLicense(licenseId: string, workspaceIds: readonly string[] | null): Promise<IntegrationRow[]> {
    return this.sql.unsafe<IntegrationRow[]>(
      `${INTEGRATION_SELECT} WHERE i.status = 'Active' AND rw.license_id = $1 AND ($2::bigint[] IS NULL OR rw.id = ANY($2::bigint[])) ORDER BY i.id`,
      [licenseId, workspaceIds as string[] | null],
    );
  }

  async licenseIdByPublicId(licensePublicId: string): Promise<string | null> {
    const [row] = await this.sql<{ id: string }[]>`SELECT id FROM licenses WHERE public_id = ${licensePublicId}`;
    return row?.id ?? null;
  }

  /** The receiving workspaces of the producer's accepted integrations (their callers may read its catalog). */
  async receivingWorkspaces(producerWorkspaceId: string): Promise<WorkspaceRow[]> {
    return this.sql<WorkspaceRow[]>`
      SELECT DISTINCT w.id, w.public_id AS "publicId", w.license_id AS "licenseId", l.public_id AS "licensePublicId",
             w.archived, w.is_producer AS "isProducer"
      FROM integrations i JOIN workspaces w ON w.id = i.receiving_workspace_id JOIN licenses l ON l.id = w.license_id
      WHERE i.producer_workspace_id = ${producerWorkspaceId} AND i.status = 'Active'`;
  }

  /**
   * Pending → Active onto the chosen workspace, creating it (and, for a new
   * account, its license and Build key) in the same transaction. Null when the
   * integration is no longer Pending (a concurrent accept won).
   */
  async accept(integrationId: string, into: AcceptInto, ownerSubject: string | null): Promise<Accepted | null> {
    return this.sql.begin(async (tx) => {
      const [row] = await tx<{ status: IntegrationStatus }[]>`SELECT status FROM integrations WHERE id = ${integrationId} FOR UPDATE`;
      if (!row || row.status !== 'Pending') return null;
      // LicenseRepo only issues tagged queries, which a transaction runs the same way.
      const licenses = new LicenseRepo(tx as unknown as Sql);
      let workspaceId: string;
      let buildKey: string | undefined;
      if (into.kind === 'workspace') workspaceId = into.workspaceId;
      else if (into.kind === 'new-workspace') {
        workspaceId = (await licenses.createWorkspace(into.licenseId, 'integrations')).id;
      } else {
        const license = await licenses.createLicense(into.email);
        workspaceId = (await licenses.createWorkspace(license.id, 'default')).id;
        buildKey = (await licenses.createKey({ licenseId: license.id, workspaceId, profile: 'build', name: 'integration build key' })).wire;
      }
      if (ownerSubject !== null && into.kind !== 'workspace') {
        await tx`INSERT INTO memberships (workspace_id, subject, role) VALUES (${workspaceId}, ${ownerSubject}, 'Owner') ON CONFLICT DO NOTHING`;
      }
      await tx`UPDATE integrations SET status = 'Active', receiving_workspace_id = ${workspaceId}, accepted_at = now() WHERE id = ${integrationId}`;
      const [ws] = await tx<{ publicId: string; licensePublicId: string }[]>`
        SELECT w.public_id AS "publicId", l.public_id AS "licensePublicId" FROM workspaces w JOIN licenses l ON l.id = w.license_id
        WHERE w.id = ${workspaceId}`;
      return {
        receivingWorkspaceId: workspaceId,
        receivingTenantPublicId: ws!.publicId,
        licensePublicId: ws!.licensePublicId,
        ...(buildKey ? { buildKey } : {}),
      };
    });
  }

  async subscriptionsOf(integrationIds: readonly string[]): Promise<SubscriptionRow[]> {
    if (integrationIds.length === 0) return [];
    return this.sql.unsafe<SubscriptionRow[]>(`${SUBSCRIPTION_SELECT} WHERE s.integration_id = ANY($1::bigint[]) ORDER BY s.id`, [integrationIds as string[]]);
  }

  /**
   * Subscribes the integration to a stream: the receiving workspace gets a
   * queue named after the stream (created if missing, reused if the partner
   * made it already). `conflict` when that name is taken by a queue that
   * cannot be the receiving one: a public stream of the partner's own, or the
   * receiving queue of another subscription.
   */
  async subscribe(
    integrationId: string,
    receivingWorkspaceId: string,
    entry: { id: string; name: string },
  ): Promise<{ row: SubscriptionRow; created: boolean; changed: boolean } | { conflict: string }> {
    return this.sql.begin(async (tx) => {
      await tx`SELECT id FROM integrations WHERE id = ${integrationId} FOR UPDATE`;
      const [existing] = await tx<{ id: string; receivingQueueId: string | null }[]>`
        SELECT id, receiving_queue_id AS "receivingQueueId" FROM subscriptions
        WHERE integration_id = ${integrationId} AND catalog_entry_id = ${entry.id}`;
      let queueId = existing?.receivingQueueId ?? null;
      let changed = false;
      if (queueId === null) {
        const [queue] = await tx<{ id: string; isPublic: boolean }[]>`
          SELECT id, COALESCE((settings->>'public')::boolean, false) AS "isPublic" FROM queues
          WHERE workspace_id = ${receivingWorkspaceId} AND name = ${entry.name} FOR UPDATE`;
        if (queue) {
          if (queue.isPublic) return { conflict: `The receiving workspace already publishes a stream named ${entry.name}.` };
          const [taken] = await tx`SELECT 1 FROM subscriptions WHERE receiving_queue_id = ${queue.id}`;
          if (taken) return { conflict: `The queue ${entry.name} of the receiving workspace already receives another subscription.` };
          queueId = queue.id;
        } else {
          // DO NOTHING: another subscription (or a /v1 PUT) may create it at this moment.
          const [created] = await tx<{ id: string }[]>`
            INSERT INTO queues (public_id, workspace_id, name, settings) VALUES (${newId('que')}, ${receivingWorkspaceId}, ${entry.name}, '{}'::jsonb)
            ON CONFLICT (workspace_id, name) DO NOTHING RETURNING id`;
          if (!created) return { conflict: `The queue ${entry.name} of the receiving workspace was created concurrently; try again.` };
          queueId = created.id;
        }
        changed = true;
      }
      let id: string;
      if (existing) {
        id = existing.id;
        if (changed) await tx`UPDATE subscriptions SET receiving_queue_id = ${queueId} WHERE id = ${id}`;
      } else {
        const [row] = await tx<{ id: string }[]>`
          INSERT INTO subscriptions (public_id, integration_id, catalog_entry_id, receiving_queue_id)
          VALUES (${newId('sub')}, ${integrationId}, ${entry.id}, ${queueId}) RETURNING id`;
        id = row!.id;
      }
      const [row] = await tx.unsafe<SubscriptionRow[]>(`${SUBSCRIPTION_SELECT} WHERE s.id = $1`, [id]);
      return { row: row!, created: !existing, changed: changed || !existing };
    });
  }

  /** Ends a subscription; false when there was none. The partner's queue stays theirs. */
  async unsubscribe(integrationId: string, subscriptionPublicId: string): Promise<boolean> {
    const rows = await this.sql`DELETE FROM subscriptions WHERE integration_id = ${integrationId} AND public_id = ${subscriptionPublicId} RETURNING id`;
    return rows.length > 0;
  }
}
