import type { Static } from 'typebox';
import { actorOf } from '../../activity/activity-kinds.js';
import type { Caller, ManagementAuth } from '../../auth/management-auth.js';
import type { ActivityRepo } from '../../storage/activity-repo.js';
import type { InvalidationBus } from '../../cache/invalidation-bus.js';
import type { QueueDefaults } from '../../routing/queue-settings.js';
import { ServiceError } from '../../errors.js';
import type { Exchange } from '../../http/exchange.js';
import { decodePathSegment } from '../../http/path-segment.js';
import type { Router } from '../../http/router.js';
import type { SigningKeyRepo } from '../../storage/signing-key-repo.js';
import type { QueueRow, TopologyRepo, WorkspaceRow } from '../../storage/topology-repo.js';
import { queueJson, targetJson } from './config-api.js';
import { queueState } from './queue-state.js';
import type { QueueListView, QueueWithStateView, RouteListView, TargetListView } from './resource-views.js';

export interface TopologyListsApiDeps {
  auth: ManagementAuth;
  topology: TopologyRepo;
  signingKeys: SigningKeyRepo;
  bus: InvalidationBus;
  defaultTimeoutMs: number;
  queueDefaults: QueueDefaults;
  /** The workspace activity feed: queues archived and restored, targets enabled. */
  activity: ActivityRepo;
}

/**
 * What the console lists of a workspace, and the two actions on its states:
 *
 *   GET  /v1/tenants/{tenant}/queues                  { items: [queue + state, pausedReason] }, archived ones too
 *   POST /v1/tenants/{tenant}/queues/{name}/archive   the queue takes no events until restored (idempotent; other settings kept)
 *   POST /v1/tenants/{tenant}/queues/{name}/restore   an archived queue takes events again (idempotent)
 *   GET  /v1/tenants/{tenant}/targets                 { items: [target + disabled, disabledReason, disabledAt] }
 *   POST /v1/tenants/{tenant}/targets/{name}/enable   a disabled target delivers again (idempotent)
 *   GET  /v1/tenants/{tenant}/routes                  { items: [{ queue, target, … }] }
 *
 * Writes are published on the invalidation bus before the answer, like every
 * configuration write, so ingress and delivery see them at once.
 */
export function registerTopologyListsApi(router: Router, deps: TopologyListsApiDeps): void {
  const base = '/v1/tenants/:tenant';
  const opts = { maxBodyBytes: 0 };
  const access = async (ex: Exchange): Promise<WorkspaceRow> => (await accessAs(ex)).ws;
  const accessAs = (ex: Exchange): Promise<{ ws: WorkspaceRow; caller: Caller }> =>
    deps.auth.configWorkspace(ex, decodePathSegment(ex.params[0]!, 'No such workspace.'));

  const queueView = async (ws: WorkspaceRow, rows: QueueRow[]): Promise<Array<Static<typeof QueueWithStateView>>> => {
    const needsKeys = rows.some((r) => r.settings.authMode === 'signed_request');
    const activeSigningKeys = needsKeys ? (await deps.signingKeys.active(ws.id)).length : 0;
    return rows.map((row) => ({ ...queueJson(ws, row, deps.queueDefaults), ...queueState(row.settings, { workspaceArchived: ws.archived, activeSigningKeys }) }));
  };

  router.add('get', `${base}/queues`, opts, async (ex) => {
    const ws = await access(ex);
    const answer: Static<typeof QueueListView> = { items: await queueView(ws, await deps.topology.listQueues(ws.id)) };
    ex.sendJson(200, answer);
  });
  // Archive and restore: one flag, set or cleared; idempotent, every other setting kept.
  for (const [action, archived] of [['archive', true], ['restore', false]] as const) {
    router.add('post', `${base}/queues/:name/${action}`, opts, async (ex) => {
      const { ws, caller } = await accessAs(ex);
      const result = await deps.topology.setQueueArchived(ws.id, decodePathSegment(ex.params[1]!), archived);
      if (!result) throw new ServiceError('not_found', 'No such queue.');
      if (result.changed) {
        await deps.bus.publish('queue');
        await deps.activity.record(ws.id, { kind: archived ? 'queue.archived' : 'queue.restored', actor: actorOf(caller), subject: result.row.name, detail: null });
      }
      ex.sendJson(200, (await queueView(ws, [result.row]))[0]);
    });
  }

  router.add('get', `${base}/targets`, opts, async (ex) => {
    const ws = await access(ex);
    const rows = await deps.topology.listTargets(ws.id);
    const answer: Static<typeof TargetListView> = { items: rows.map((row) => targetJson(row, deps.defaultTimeoutMs)) };
    ex.sendJson(200, answer);
  });
  router.add('post', `${base}/targets/:name/enable`, opts, async (ex) => {
    const { ws, caller } = await accessAs(ex);
    const enabled = await deps.topology.enableTarget(ws.id, decodePathSegment(ex.params[1]!));
    if (!enabled) throw new ServiceError('not_found', 'No such target.');
    if (enabled.changed) {
      await deps.bus.publish('target');
      await deps.activity.record(ws.id, { kind: 'target.enabled', actor: actorOf(caller), subject: enabled.row.name, detail: null });
    }
    ex.sendJson(200, targetJson(enabled.row, deps.defaultTimeoutMs));
  });

  router.add('get', `${base}/routes`, opts, async (ex) => {
    const ws = await access(ex);
    const rows = await deps.topology.listRoutes(ws.id);
    const answer: Static<typeof RouteListView> = {
      items: rows.map((r) => ({ queue: r.queue, queuePublicId: r.queuePublicId, target: r.target, targetPublicId: r.targetPublicId, createdAt: r.createdAt.toISOString() })),
    };
    ex.sendJson(200, answer);
  });
}
