import type { ManagementAuth } from '../../auth/management-auth.js';
import type { InvalidationBus } from '../../cache/invalidation-bus.js';
import type { Exchange } from '../../http/exchange.js';
import { decodePathSegment } from '../../http/path-segment.js';
import type { Router } from '../../http/router.js';
import { workspaceSources } from '../../ingress/queue-directory.js';
import { demandedAuthMode } from '../../storage/waas-catalog-repo.js';
import type { TopologyRepo, WorkspaceRow } from '../../storage/topology-repo.js';
import { FieldReader, readJsonObject } from '../json-body.js';
import { readSourceRef } from './queue-input.js';

export interface WorkspaceApiDeps {
  auth: ManagementAuth;
  topology: TopologyRepo;
  bus: InvalidationBus;
  maxBodyBytes: number;
}

const SOURCE_FIELDS = ['eventType', 'groupKey', 'partitionKey'] as const;
const AUTH_MODES = ['api_key', 'signed_request'] as const;

/**
 * The workspace itself (docs/api.md#configuration-api):
 *
 *   GET   /v1/tenants/{tenant}            the workspace: archived, producer, its ingress sources and default auth mode
 *   PATCH /v1/tenants/{tenant}            { ingress?: { eventType?, groupKey?, partitionKey? }, defaultAuthMode? }
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
  const view = (ws: WorkspaceRow, name: string, settings: Record<string, unknown>, archived = ws.archived) => {
    const sources = workspaceSources(settings);
    return {
      publicId: ws.publicId,
      licensePublicId: ws.licensePublicId,
      name,
      archived,
      isProducer: ws.isProducer,
      ingress: Object.fromEntries(SOURCE_FIELDS.map((f) => [f, sources[f] ?? null])),
      defaultAuthMode: demandedAuthMode(settings),
    };
  };
  const current = async (ws: WorkspaceRow, archived = ws.archived) => {
    const { name, settings } = await deps.topology.workspaceDetails(ws.id);
    return view(ws, name, settings, archived);
  };

  router.add('get', base, { maxBodyBytes: 0 }, async (ex) => {
    ex.sendJson(200, await current(await access(ex)));
  });

  router.add('patch', base, { maxBodyBytes: deps.maxBodyBytes }, async (ex) => {
    const ws = await access(ex);
    const body = await readJsonObject(ex);
    const r = new FieldReader(body, ['ingress', 'defaultAuthMode']);
    const { name, settings } = await deps.topology.workspaceDetails(ws.id);
    const stored: Record<string, unknown> = { ...workspaceSources(settings) };
    const set: Record<string, unknown> = {};
    const unset: string[] = [];
    if (r.has('ingress') && body.ingress !== null) {
      const given = body.ingress;
      if (typeof given !== 'object' || Array.isArray(given)) r.problem('ingress', 'must be an object { eventType?, groupKey?, partitionKey? }');
      else {
        const ingress = { ...stored };
        for (const key of Object.keys(given)) if (!(SOURCE_FIELDS as readonly string[]).includes(key)) r.problem(`ingress.${key}`, 'unknown field');
        for (const field of SOURCE_FIELDS) {
          if (!(field in given)) continue;
          const raw = (given as Record<string, unknown>)[field];
          if (raw === null) {
            delete ingress[field];
            continue;
          }
          const ref = readSourceRef(raw);
          if (typeof ref === 'string') r.problem(`ingress.${field}`, ref);
          else ingress[field] = ref;
        }
        set.ingress = ingress;
      }
    } else if (r.has('ingress')) unset.push('ingress');
    if (r.has('defaultAuthMode') && body.defaultAuthMode === null) unset.push('defaultAuthMode');
    else {
      const mode = r.oneOf('defaultAuthMode', AUTH_MODES);
      if (mode !== undefined) set.defaultAuthMode = mode;
    }
    r.done();
    if (await deps.topology.updateWorkspaceSettings(ws.id, set, unset)) await deps.bus.publish('workspace');
    const next: Record<string, unknown> = { ...settings, ...set };
    for (const key of unset) delete next[key];
    ex.sendJson(200, view(ws, name, next));
  });

  for (const [action, archived] of [['archive', true], ['restore', false]] as const) {
    router.add('post', `${base}/${action}`, { maxBodyBytes: 0 }, async (ex) => {
      const ws = await access(ex);
      if (await deps.topology.setWorkspaceArchived(ws.id, archived)) await deps.bus.publish('workspace');
      ex.sendJson(200, await current(ws, archived));
    });
  }
}

