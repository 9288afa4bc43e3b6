import type { CacheStore } from '../cache/cache-store.js';
import { TtlCache } from '../cache/ttl-cache.js';
import type { LiveSubscription, StreamView } from '../storage/waas-gate-repo.js';

export type { LiveSubscription, StreamView };

/** Where the gate's facts come from when no cache has them (Postgres: WaasGateRepo). */
export interface GateSource {
  streamOfQueue(queueId: string): Promise<StreamView | null>;
  activeIntegrations(producerWorkspaceId: string, groupKey: string): Promise<string[]>;
}

export interface GateOptions {
  /** The shared view (Redis in a cluster); null runs on Postgres and the in-process cache alone. */
  cache: CacheStore | null;
  /** How long a shared copy of a view lives (it is versioned: a write never needs to delete it). */
  sharedTtlSeconds: number;
  /** Bound on in-process staleness should every invalidation be lost. */
  ttlMs: number;
}

/** A stream the record's group key opens, and the subscriptions it opens it to. */
export interface OpenRoute {
  stream: StreamView;
  subscriptions: LiveSubscription[];
}

/**
 * The routing gate (docs/api.md#producer-api-waas): an event of a producer's stream reaches an
 * integration only when the subscription is live (no block covers it) AND an
 * Active activation exists for (producer, the event's group key, integration).
 *
 * Three layers, each filled from the next on a miss:
 *
 *   in-process TtlCache ──► shared view (CacheStore), keyed by config version ──► Postgres
 *   (cleared when the         v{N}:stream:{queueId}             → StreamView | null
 *    version moves)           v{N}:act:{producerId}:{groupKey}  → [integration ids]
 *
 * The Redis keys carry the cluster's config version (InvalidationBus): every
 * management write bumps it after its commit, so a view filled at version N
 * was read from Postgres after write N committed, and no write ever has to
 * find and delete views. Stale versions simply expire.
 */
export class RoutingGate {
  private version: number | null = null;
  private readonly streams: TtlCache<StreamView | null>;
  private readonly activations: TtlCache<ReadonlySet<string>>;

  private readonly source: GateSource;
  private readonly options: GateOptions;
  constructor(
    source: GateSource,
    options: GateOptions,
  ) {
    this.source = source;
    this.options = options;
    this.streams = new TtlCache(options.ttlMs);
    this.activations = new TtlCache(options.ttlMs);
  }

  /**
   * Moves to the cluster's config `version` (null when it could not be read:
   * the Redis view is bypassed until it can). Clears the in-process view when
   * the version changed.
   */
  useVersion(version: number | null): void {
    if (version !== null && version === this.version) return;
    this.version = version;
    this.clear();
  }

  /** The live, activated subscriptions an event of `queueId` with `groupKey` goes to; null when none. */
  async open(queueId: string, groupKey: string): Promise<OpenRoute | null> {
    const stream = await this.streams.getOrLoad(queueId, () => this.loadStream(queueId));
    if (!stream || stream.live.length === 0) return null;
    const active = await this.activations.getOrLoad(`${stream.producerWorkspaceId}\n${groupKey}`, () =>
      this.loadActivations(stream.producerWorkspaceId, groupKey),
    );
    if (active.size === 0) return null;
    const subscriptions = stream.live.filter((s) => active.has(s.integrationId));
    return subscriptions.length > 0 ? { stream, subscriptions } : null;
  }

  clear(): void {
    this.streams.clear();
    this.activations.clear();
  }

  private async loadStream(queueId: string): Promise<StreamView | null> {
    const version = this.version;
    const key = version === null ? null : `waas:gate:${version}:stream:${queueId}`;
    const cached = key ? await this.sharedGet(key) : null;
    if (cached !== null) return JSON.parse(cached) as StreamView | null;
    const view = await this.source.streamOfQueue(queueId);
    if (key) await this.sharedSet(key, JSON.stringify(view));
    return view;
  }

  private async loadActivations(producerWorkspaceId: string, groupKey: string): Promise<ReadonlySet<string>> {
    const version = this.version;
    const key = version === null ? null : `waas:gate:${version}:act:${producerWorkspaceId}:${groupKey}`;
    const cached = key ? await this.sharedGet(key) : null;
    if (cached !== null) return new Set(JSON.parse(cached) as string[]);
    const ids = await this.source.activeIntegrations(producerWorkspaceId, groupKey);
    if (key) await this.sharedSet(key, JSON.stringify(ids));
    return new Set(ids);
  }

  // The shared view is a cache: when it fails, Postgres answers (slower, never wrong).
  private async sharedGet(key: string): Promise<string | null> {
    if (!this.options.cache) return null;
    try {
      return await this.options.cache.get(key);
    } catch {
      return null;
    }
  }

  private async sharedSet(key: string, value: string): Promise<void> {
    if (!this.options.cache) return;
    try {
      await this.options.cache.set(key, value, this.options.sharedTtlSeconds * 1000);
    } catch {
      // the next reader fills it
    }
  }
}
