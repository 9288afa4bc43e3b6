import type { ManagementAuth } from '../../auth/management-auth.js';
import type { InvalidationBus } from '../../cache/invalidation-bus.js';
import type { Exchange } from '../../http/exchange.js';
import { decodePathSegment } from '../../http/path-segment.js';
import type { Router } from '../../http/router.js';
import { workspaceSources } from '../../ingress/queue-directory.js';
import { demandedAuthMode } from '../../storage/waas-catalog-repo.js';
import type { TopologyRepo, WorkspaceRow } from '../../storage/topology-repo.js';
import Type, { type Static } from 'typebox';
import { compileBody } from '../../schema/body-validator.js';
import { WorkspaceView } from './resource-views.js';
import { closed, maybe, oneOf } from '../../schema/schema-kit.js';
import { Problems, readBody } from '../json-body.js';
import { SourceRefBody, sourceRefProblem } from './queue-input.js';

export interface WorkspaceApiDeps {
  auth: ManagementAuth;
  topology: TopologyRepo;
  bus: InvalidationBus;
  maxBodyBytes: number;
  /** retention.hours: a workspace may keep its events for less, never more. */
  retentionHours: number;
}

const SOURCE_FIELDS = ['eventType', 'groupKey', 'partitionKey'] as const;
const AUTH_MODES = ['api_key', 'signed_request'] as const;

/** The body of `PATCH /v1/tenants/{tenant}`: a field set to null goes back to its default. */
export const WorkspacePatch = closed(
  {
    ingress: maybe(closed({ eventType: maybe(SourceRefBody), groupKey: maybe(SourceRefBody), partitionKey: maybe(SourceRefBody) })),
    defaultAuthMode: maybe(oneOf(AUTH_MODES)),
    retentionHours: maybe(
      Type.Number({ exclusiveMinimum: 0, description: "how long to keep this workspace's events, at most the service's retention.hours (decimals allowed); null: the service's" }),
    ),
  },
  { title: 'WorkspacePatch', description: 'The workspace settings to change; a field set to null goes back to its default.' },
);
const checkWorkspacePatch = compileBody(WorkspacePatch);

/**
 * The workspace itself (docs/api.md#configuration-api):
 *
 *   GET   /v1/tenants/{tenant}            the workspace: archived, producer, its ingress sources and default auth mode
 *   PATCH /v1/tenants/{tenant}            { ingress?: { eventType?, groupKey?, partitionKey? }, defaultAuthMode?, retentionHours? }
 *                                         (a field set to null goes back to the default)
 *   POST  /v1/tenants/{tenant}/archive    every queue of it takes no events (409 queue_archived) until restored
 *   POST  /v1/tenants/{tenant}/restore
 *
 * The ingress sources are where a queue that names none reads the event type,
 * group key and partition key (else the X-Service-* headers); the default auth
 * mode is what a queue made by PUT /waas/streams gets. Writes are published on
 * the invalidation bus before the answer, so every ingress node sees them at once.
 */
export function registerWorkspaceApi(router: Router, deps: WorkspaceApiDeps): void {
  const base = '/v1/tenants/:tenant';
  const access = async (ex: Exchange): Promise<WorkspaceRow> => (await deps.auth.configWorkspace(ex, decodePathSegment(ex.params[0]!, 'No such workspace.'))).ws;
  const view = (ws: WorkspaceRow, name: string, settings: Record<string, unknown>, retentionHours: number | null, archived = ws.archived): Static<typeof WorkspaceView> => {
    const sources = workspaceSources(settings);
    return {
      publicId: ws.publicId,
      licensePublicId: ws.licensePublicId,
      name,
      archived,
      isProducer: ws.isProducer,
      ingress: { eventType: sources.eventType ?? null, groupKey: sources.groupKey ?? null, partitionKey: sources.partitionKey ?? null },
      defaultAuthMode: demandedAuthMode(settings),
      retentionHours,
    };
  };
  const current = async (ws: WorkspaceRow, archived = ws.archived) => {
    const { name, settings, retentionHours } = await deps.topology.workspaceDetails(ws.id);
    return view(ws, name, settings, retentionHours, archived);
  };

  router.add('get', base, { maxBodyBytes: 0 }, async (ex) => {
    ex.sendJson(200, await current(await access(ex)));
  });

  router.add('patch', base, { maxBodyBytes: deps.maxBodyBytes, body: checkWorkspacePatch }, async (ex) => {
    const ws = await access(ex);
    const body = await readBody(ex, checkWorkspacePatch);
    const problems = new Problems();
    const { name, settings, retentionHours } = await deps.topology.workspaceDetails(ws.id);
    const set: Record<string, unknown> = {};
    const unset: string[] = [];
    if (body.ingress === null) unset.push('ingress');
    else if (body.ingress !== undefined) {
      const ingress: Record<string, unknown> = { ...workspaceSources(settings) };
      for (const field of SOURCE_FIELDS) {
        const ref = body.ingress[field];
        if (ref === undefined) continue;
        if (ref === null) delete ingress[field];
        else {
          const problem = sourceRefProblem(ref);
          if (problem) problems.add(`ingress.${field}.name`, problem);
          else ingress[field] = ref;
        }
      }
      set.ingress = ingress;
    }
    if (body.defaultAuthMode === null) unset.push('defaultAuthMode');
    else if (body.defaultAuthMode !== undefined) set.defaultAuthMode = body.defaultAuthMode;
    if (body.retentionHours != null && body.retentionHours > deps.retentionHours) {
      problems.add('retentionHours', `must be at most ${deps.retentionHours} (the service's retention.hours): a workspace may keep its events for less, not more`);
    }
    problems.throwIfAny();
    let changed = await deps.topology.updateWorkspaceSettings(ws.id, set, unset);
    // Read by the retention sweep and the events API from the row itself: nothing cached to invalidate.
    const nextRetention = body.retentionHours === undefined ? retentionHours : body.retentionHours;
    if (body.retentionHours !== undefined) changed = (await deps.topology.setWorkspaceRetentionHours(ws.id, nextRetention)) || changed;
    if (changed) await deps.bus.publish('workspace');
    const next: Record<string, unknown> = { ...settings, ...set };
    for (const key of unset) delete next[key];
    ex.sendJson(200, view(ws, name, next, nextRetention));
  });

  for (const [action, archived] of [['archive', true], ['restore', false]] as const) {
    router.add('post', `${base}/${action}`, { maxBodyBytes: 0 }, async (ex) => {
      const ws = await access(ex);
      if (await deps.topology.setWorkspaceArchived(ws.id, archived)) await deps.bus.publish('workspace');
      ex.sendJson(200, await current(ws, archived));
    });
  }
}

