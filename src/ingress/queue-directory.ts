import { TtlCache } from '../cache/ttl-cache.js';
import { IpAllowlist } from '../auth/ip-allowlist.js';
import { standardWebhooksKey, textKey } from '../auth/source-signatures.js';
import {
  SOURCE_HEADERS,
  VALUE_SOURCES,
  isSourceAuthMode,
  withQueueDefaults,
  type QueueDefaults,
  type QueueSettings,
  type SourceRef,
} from '../routing/queue-settings.js';
import type { IngressQueueRow, IngressRepo } from '../storage/ingress-repo.js';

/** The three context values and where a queue reads each (docs/api.md#configuration-api). */
export interface ContextSources {
  eventType: SourceRef;
  groupKey: SourceRef;
  partitionKey: SourceRef;
}

/** What ingress needs to know about the queue a request names, precomputed once per cache fill. */
export interface QueueView {
  tenantPublicId: string;
  workspaceId: string;
  licenseId: string;
  workspaceArchived: boolean;
  queueId: string;
  queuePublicId: string;
  queueName: string;
  /** Stored settings over the defaults (hop budget and dedup window from config). */
  settings: QueueSettings;
  /** `sg:<tenant>/<queue>`: this queue's X-Service-Path segment. */
  ownSegment: string;
  sources: ContextSources;
  /** Some context value or mapped header comes from the body: it must be a JSON object. */
  readsBody: boolean;
  allowlist: IpAllowlist | null;
  /**
   * Inbound source modes (standard_webhooks, github, shopify): the HMAC key the
   * sourceSecret gives, null when there is none (or it is unusable): the queue is paused.
   */
  sourceKey: Uint8Array | null;
  /** Inbound source modes: the provider's delivery-id header, the idempotency key when no Idempotency-Key is sent. */
  deliveryIdHeader: string | null;
}


export const DEFAULT_SOURCES: Readonly<ContextSources> = Object.freeze<ContextSources>({
  eventType: { source: 'header', name: 'x-service-event-type' },
  groupKey: { source: 'header', name: 'x-service-group-key' },
  partitionKey: { source: 'header', name: 'x-service-partition-key' },
});

/**
 * Resolves `/events/{tenant}/{queue}` to a queue, cached in-process (hits are
 * the common case: a sender posts to a handful of queues). Misses are cached
 * too, so a flood to an unknown queue costs one query per TTL, not one per post.
 * A hit is returned synchronously: the hot path pays no promise for it.
 */
export class QueueDirectory {
  private readonly cache: TtlCache<QueueView | null>;

  private readonly repo: IngressRepo;
  private readonly defaults: QueueDefaults;
  constructor(
    repo: IngressRepo,
    ttlMs: number,
    defaults: QueueDefaults,
  ) {
    this.repo = repo;
    this.defaults = defaults;
    this.cache = new TtlCache(ttlMs);
  }

  resolve(tenantPublicId: string, queueName: string): QueueView | null | Promise<QueueView | null> {
    const key = `${tenantPublicId}\n${queueName}`;
    const hit = this.cache.get(key);
    if (hit !== undefined) return hit;
    return this.cache.getOrLoad(key, async () => {
      const row = await this.repo.queue(tenantPublicId, queueName);
      return row ? buildView(tenantPublicId, row, this.defaults) : null;
    });
  }

  invalidate(): void {
    this.cache.clear();
  }
}

export function buildView(tenantPublicId: string, row: IngressQueueRow, defaults: QueueDefaults): QueueView {
  const stored = row.settings ?? {};
  const settings: QueueSettings = withQueueDefaults(stored, defaults);
  const wsDefaults = workspaceSources(row.workspaceSettings);
  const source = isSourceAuthMode(settings.authMode) ? SOURCE_HEADERS[settings.authMode] : null;
  // A provider's own event-type header is more specific than the workspace's default; the queue's own source wins.
  const providerEventType: SourceRef | undefined = source?.eventType ? { source: 'header', name: source.eventType } : undefined;
  const sources: ContextSources = {
    eventType: normalise(settings.eventType ?? providerEventType ?? wsDefaults.eventType ?? DEFAULT_SOURCES.eventType),
    groupKey: normalise(settings.groupKey ?? wsDefaults.groupKey ?? DEFAULT_SOURCES.groupKey),
    partitionKey: normalise(settings.partitionKey ?? wsDefaults.partitionKey ?? DEFAULT_SOURCES.partitionKey),
  };
  const refs = [sources.eventType, sources.groupKey, sources.partitionKey, ...settings.mappedHeaders.map((m) => m.from)];
  return {
    tenantPublicId,
    workspaceId: row.workspaceId,
    licenseId: row.licenseId,
    workspaceArchived: row.workspaceArchived,
    queueId: row.queueId,
    queuePublicId: row.queuePublicId,
    queueName: row.queueName,
    settings: { ...settings, mappedHeaders: settings.mappedHeaders.map((m) => ({ ...m, from: normalise(m.from) })) },
    ownSegment: `sg:${tenantPublicId}/${row.queueName}`,
    sources,
    readsBody: refs.some((r) => r.source === 'body'),
    allowlist: settings.ipAllowlist.length > 0 ? new IpAllowlist(settings.ipAllowlist) : null,
    sourceKey: source ? sourceKeyOf(settings) : null,
    deliveryIdHeader: source?.deliveryId ?? null,
  };
}

/** The HMAC key of an inbound source queue's sourceSecret, or null (none set, or not a whsec_ secret on a standard_webhooks queue). */
export function sourceKeyOf(settings: Pick<QueueSettings, 'authMode' | 'sourceSecret'>): Uint8Array | null {
  const secret = settings.sourceSecret;
  if (typeof secret !== 'string' || secret.length === 0) return null;
  return settings.authMode === 'standard_webhooks' ? standardWebhooksKey(secret) : textKey(secret);
}

/** Header names are looked up lower-cased (the parser gives them so); query and body names are exact. */
function normalise(ref: SourceRef): SourceRef {
  return ref.source === 'header' ? { source: 'header', name: ref.name.toLowerCase() } : ref;
}

/**
 * Workspace-wide extraction defaults, `settings.ingress.{eventType,groupKey,partitionKey}`
 * on the workspace row (set from a deploy file or the console). Read
 * defensively: an entry that is not a valid source is ignored, never fatal.
 */
/** The ingress sources a workspace names for its queues (settings.ingress), malformed entries ignored. */
export function workspaceSources(settings: Record<string, unknown> | null): Partial<ContextSources> {
  const ingress = settings?.ingress;
  if (typeof ingress !== 'object' || ingress === null) return {};
  const out: Partial<ContextSources> = {};
  for (const field of ['eventType', 'groupKey', 'partitionKey'] as const) {
    const ref = (ingress as Record<string, unknown>)[field];
    if (isSourceRef(ref)) out[field] = { source: ref.source, name: ref.name };
  }
  return out;
}

function isSourceRef(v: unknown): v is SourceRef {
  if (typeof v !== 'object' || v === null) return false;
  const r = v as Record<string, unknown>;
  return typeof r.source === 'string' && (VALUE_SOURCES as readonly string[]).includes(r.source) && typeof r.name === 'string' && r.name.length > 0;
}
