import { actorOf } from '../../activity/activity-kinds.js';
import type { ActivityRepo } from '../../storage/activity-repo.js';
import type { Caller, ManagementAuth } from '../../auth/management-auth.js';
import type { InvalidationBus } from '../../cache/invalidation-bus.js';
import type { KeyRepo } from '../../storage/key-repo.js';
import type { QueueDefaults } from '../../routing/queue-settings.js';
import { ServiceError } from '../../errors.js';
import type { Exchange } from '../../http/exchange.js';
import type { Router } from '../../http/router.js';
import type { KeyProfile } from '../../auth/api-key.js';
import type { SsrfGuard } from '../../delivery/http/ssrf-guard.js';
import type { LicenseRepo } from '../../storage/license-repo.js';
import type { QueueRow, TargetRow, TopologyRepo, Upserted, WorkspaceRow } from '../../storage/topology-repo.js';
import Type, { type Static } from 'typebox';
import { ApiKeyCreatedView, ApiKeyListView, RouteEndsView, KEY_PROFILES, QueueView, TargetView } from './resource-views.js';
import { compileBody } from '../../schema/body-validator.js';
import { closed, maybe, oneOf } from '../../schema/schema-kit.js';
import { readBody, readJsonObject } from '../json-body.js';
import { checkQueueInput, queueSettingsView, readQueueSettings } from './queue-input.js';
import type { QueueLookupRepo } from '../../storage/queue-lookup-repo.js';
import { checkRouteHeaders, checkTargetInput, checkTargetUrls, readTarget } from './target-input.js';
import { decodePathSegment } from '../../http/path-segment.js';

/** The body of `POST /v1/tenants/{tenant}/keys`: a new API key of this workspace. */
export const ApiKeyInput = closed(
  {
    profile: maybe(oneOf(KEY_PROFILES)),
    name: maybe(Type.String({ maxLength: 200 })),
    queueScopes: maybe(Type.Array(Type.String(), { maxItems: 1000 })),
  },
  { title: 'ApiKeyInput', description: 'A new API key: its profile (default ingress), a name, and the queues it may send to (null: all).' },
);
const checkApiKeyInput = compileBody(ApiKeyInput);

export interface ConfigApiDeps {
  auth: ManagementAuth;
  topology: TopologyRepo;
  licenses: LicenseRepo;
  guard: SsrfGuard;
  bus: InvalidationBus;
  maxBodyBytes: number;
  defaultTimeoutMs: number;
  /** What a queue that does not set hopBudget / dedupWindowSeconds gets (config ingress.*). */
  queueDefaults: QueueDefaults;
  queueLookup: QueueLookupRepo;
  keys: KeyRepo;
  /** The workspace activity feed: keys created and revoked, queues closed and opened. */
  activity: ActivityRepo;
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;
const PROFILE_RANK: Record<KeyProfile, number> = { ingress: 0, full: 1, build: 2 };

/**
 * The configuration API of docs/api.md#configuration-api: idempotent PUTs of queues, targets and
 * routes, their GETs and DELETEs, and key creation. Every write invalidates the
 * caches of every node before it answers.
 */
export function registerConfigApi(router: Router, deps: ConfigApiDeps): void {
  const opts = { maxBodyBytes: deps.maxBodyBytes };
  const base = '/v1/tenants/:tenant';

  const access = (exchange: Exchange): Promise<{ ws: WorkspaceRow; profile: KeyProfile; caller: Caller }> =>
    deps.auth.configWorkspace(exchange, decodePathSegment(exchange.params[0]!));
  const changed = async (scope: string) => deps.bus.publish(scope);

  router.add('put', `${base}/queues/:name`, { ...opts, body: checkQueueInput }, async (ex) => {
    const { ws, caller } = await access(ex);
    const name = checkName(decodePathSegment(ex.params[1]!), 'name');
    const settings = readQueueSettings(await readJsonObject(ex));
    // Closing and opening a queue are in the activity feed (a PUT replaces every setting: leaving ingress out opens it).
    const wasClosed = (await deps.topology.queueByName(ws.id, name))?.settings.ingress === 'closed';
    const result = await deps.topology.upsertQueue(ws.id, name, settings);
    if (result.changed) await changed('queue');
    const isClosed = result.row.settings.ingress === 'closed';
    if (result.changed && wasClosed !== isClosed) {
      await deps.activity.record(ws.id, { kind: isClosed ? 'queue.closed' : 'queue.opened', actor: actorOf(caller), subject: name, detail: null });
    }
    sendUpserted(ex, result, queueJson(ws, result.row, deps.queueDefaults));
  });
  router.add('get', `${base}/queues/:name`, opts, async (ex) => {
    const { ws } = await access(ex);
    const row = await deps.topology.queueByName(ws.id, decodePathSegment(ex.params[1]!));
    if (!row) throw new ServiceError('not_found', 'No such queue.');
    ex.sendJson(200, queueJson(ws, row, deps.queueDefaults));
  });
  router.add('del', `${base}/queues/:name`, opts, async (ex) => {
    const { ws } = await access(ex);
    if (await deps.topology.deleteQueue(ws.id, decodePathSegment(ex.params[1]!))) await changed('queue');
    ex.send(204, '');
  });

  router.add('put', `${base}/targets/:name`, { ...opts, body: checkTargetInput }, async (ex) => {
    const { ws, caller } = await access(ex);
    const name = checkName(decodePathSegment(ex.params[1]!), 'name');
    const { url, settings } = readTarget(await readJsonObject(ex));
    await checkTargetUrls(deps.guard, url, settings);
    const existing = await deps.topology.targetByName(ws.id, name);
    if (existing) checkRouteHeaders(await deps.queueLookup.settingsRoutedTo(existing.id), settings);
    const result = await deps.topology.upsertTarget(ws.id, name, url, settings);
    if (result.changed) await changed('target');
    // A PUT re-enables a disabled target, as …/enable does.
    if (existing?.disabledAt && !result.row.disabledAt) {
      await deps.activity.record(ws.id, { kind: 'target.enabled', actor: actorOf(caller), subject: name, detail: 'by saving its settings' });
    }
    sendUpserted(ex, result, targetJson(result.row, deps.defaultTimeoutMs));
  });
  router.add('get', `${base}/targets/:name`, opts, async (ex) => {
    const { ws } = await access(ex);
    const row = await deps.topology.targetByName(ws.id, decodePathSegment(ex.params[1]!));
    if (!row) throw new ServiceError('not_found', 'No such target.');
    ex.sendJson(200, targetJson(row, deps.defaultTimeoutMs));
  });
  router.add('del', `${base}/targets/:name`, opts, async (ex) => {
    const { ws } = await access(ex);
    if (await deps.topology.deleteTarget(ws.id, decodePathSegment(ex.params[1]!))) await changed('target');
    ex.send(204, '');
  });

  const routeEnds = async (ex: Exchange) => {
    const { ws } = await access(ex);
    const queue = await deps.topology.queueByName(ws.id, decodePathSegment(ex.params[1]!));
    if (!queue) throw new ServiceError('not_found', 'No such queue.');
    const target = await deps.topology.targetByName(ws.id, decodePathSegment(ex.params[2]!));
    if (!target) throw new ServiceError('not_found', 'No such target.');
    return { queue, target };
  };
  router.add('put', `${base}/queues/:name/targets/:target`, opts, async (ex) => {
    const { queue, target } = await routeEnds(ex);
    checkRouteHeaders([queue.settings], target.settings);
    const created = await deps.topology.addRoute(queue.id, target.id);
    if (created) await changed('route');
    const answer: Static<typeof RouteEndsView> = { queue: queue.name, target: target.name };
    sendUpserted(ex, { created, changed: created }, answer);
  });
  router.add('get', `${base}/queues/:name/targets/:target`, opts, async (ex) => {
    const { queue, target } = await routeEnds(ex);
    if (!(await deps.topology.routeExists(queue.id, target.id))) throw new ServiceError('not_found', 'No such route.');
    const answer: Static<typeof RouteEndsView> = { queue: queue.name, target: target.name };
    ex.sendJson(200, answer);
  });
  router.add('del', `${base}/queues/:name/targets/:target`, opts, async (ex) => {
    const { queue, target } = await routeEnds(ex);
    if (await deps.topology.removeRoute(queue.id, target.id)) await changed('route');
    ex.send(204, '');
  });

  router.add('post', `${base}/keys`, { ...opts, body: checkApiKeyInput }, async (ex) => {
    const { profile: callerProfile, ws, caller } = await access(ex);
    const body = await readBody(ex, checkApiKeyInput);
    const profile: KeyProfile = body.profile ?? 'ingress';
    const name = body.name ?? undefined;
    const queueScopes = body.queueScopes ?? undefined;
    if (PROFILE_RANK[profile] > PROFILE_RANK[callerProfile]) {
      throw new ServiceError('missing_permission', `A ${callerProfile} key cannot create a ${profile} key.`);
    }
    const key = await deps.licenses.createKey({ licenseId: ws.licenseId, workspaceId: ws.id, profile, name, queueScopes: queueScopes ?? null });
    await deps.activity.record(ws.id, { kind: 'key.created', actor: actorOf(caller), subject: key.keyId, detail: `profile ${profile}${name ? `, name ${name}` : ''}` });
    const answer: Static<typeof ApiKeyCreatedView> = { keyId: key.keyId, key: key.wire, profile, tenantPublicId: ws.publicId, queueScopes: queueScopes ?? null };
    ex.sendJson(201, answer);
  });

  // The workspace's keys, never a secret: what an owner needs to find the key to revoke.
  router.add('get', `${base}/keys`, opts, async (ex) => {
    const { ws } = await access(ex);
    const keys = await deps.keys.list(ws.id);
    const answer: Static<typeof ApiKeyListView> = {
      data: keys.map((k) => ({
        keyId: k.keyId, name: k.name, profile: k.profile, queueScopes: k.queueScopes,
        createdAt: k.createdAt.toISOString(), lastUsedAt: k.lastUsedAt?.toISOString() ?? null, revokedAt: k.revokedAt?.toISOString() ?? null,
      })),
    };
    ex.sendJson(200, answer);
  });

  // Revokes a key: every node refuses it (401 invalid_api_key) once the invalidation reaches it.
  // Idempotent (docs/api.md#errors): again, an unknown id or another workspace's → 204, nothing changes.
  // A key cannot revoke one of a higher profile than its own, as it could not have made it.
  router.add('del', `${base}/keys/:keyId`, opts, async (ex) => {
    const { profile: callerProfile, ws, caller } = await access(ex);
    const keyId = decodePathSegment(ex.params[1]!);
    const target = await deps.keys.profileOf(ws.id, keyId);
    if (target !== null && PROFILE_RANK[target] > PROFILE_RANK[callerProfile]) {
      throw new ServiceError('missing_permission', `A ${callerProfile} key cannot revoke a ${target} key.`);
    }
    if (await deps.keys.revoke(ws.id, keyId)) {
      await changed('key');
      await deps.activity.record(ws.id, { kind: 'key.revoked', actor: actorOf(caller), subject: keyId, detail: null });
    }
    ex.send(204, '');
  });
}

function sendUpserted(ex: Exchange, result: Pick<Upserted<unknown>, 'created' | 'changed'>, json: unknown): void {
  const change = result.created ? 'created' : result.changed ? 'changed' : 'unchanged';
  ex.send(result.created ? 201 : 200, JSON.stringify(json), { 'content-type': 'application/json', 'x-streamgate-change': change });
}


function checkName(name: string, field: string): string {
  if (!NAME.test(name)) {
    throw new ServiceError('validation_failed', `${field} must be 1-100 letters, digits, '.', '_' or '-'.`, [{ field, problem: 'invalid name' }]);
  }
  return name;
}

export function queueJson(ws: WorkspaceRow, row: QueueRow, defaults: QueueDefaults): Static<typeof QueueView> {
  return {
    publicId: row.publicId,
    name: row.name,
    tenantPublicId: ws.publicId,
    ...queueSettingsView(row.settings, defaults),
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

/** Secrets are write-only: responses say which auth mode is set, never its secret. */
export function targetJson(row: TargetRow, defaultTimeoutMs: number): Static<typeof TargetView> {
  const auth = row.settings.auth ?? { mode: 'none' as const };
  return {
    publicId: row.publicId,
    name: row.name,
    url: row.url,
    auth: auth.mode === 'basic' ? { mode: 'basic', username: auth.username }
      : auth.mode === 'oauth2' ? { mode: 'oauth2', tokenUrl: auth.tokenUrl, clientId: auth.clientId, ...(auth.scope ? { scope: auth.scope } : {}) }
      : { mode: auth.mode },
    staticHeaders: row.settings.staticHeaders ?? {},
    timeoutMs: row.settings.timeoutMs ?? defaultTimeoutMs,
    groupKeyHeader: row.settings.groupKeyHeader ?? null,
    retryPolicy: row.settings.retryPolicy ?? null,
    maxConcurrency: row.settings.maxConcurrency ?? null,
    maxRatePerSecond: row.settings.maxRatePerSecond ?? null,
    disabled: row.disabledAt !== null,
    disabledReason: row.disabledReason,
    disabledAt: row.disabledAt?.toISOString() ?? null,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}
