import { TtlCache } from '../cache/ttl-cache.js';
import type { EventRecord } from '../event-log/event-record.js';
import type { TopologyRepo } from '../storage/topology-repo.js';
import type { RoutingGate } from './routing-gate.js';
import { withTargetDefaults, type TargetSettings } from './target-settings.js';
import { withinMs } from '../util/within-ms.js';

/** A target as delivery sees it: where to send and how. */
export interface RouteTarget {
  id: string;
  publicId: string;
  name: string;
  url: URL;
  settings: TargetSettings;
  disabled: boolean;
  /**
   * Set when the target belongs to an integration partner: the event of a
   * producer's stream reaches it through the partner's receiving queue
   * (docs/api.md#producer-api-waas). Delivery should treat that queue and workspace as the
   * ones the event came through (signing keys, queue settings); metrics
   * count these deliveries as distributed traffic.
   */
  via?: PartnerRoute;
}

/** How an event of a producer's stream came to a partner's target. */
export interface PartnerRoute {
  producerWorkspaceId: string;
  producerTenantPublicId: string;
  catalogEntryPublicId: string;
  integrationPublicId: string;
  receivingWorkspaceId: string;
  receivingTenantPublicId: string;
  receivingQueueId: string;
  receivingQueueName: string;
}

/** Reads the cluster's config version (InvalidationBus). */
export interface VersionSource {
  currentVersion(): Promise<number>;
}

export interface RouteTableOptions {
  /** Partner fan-out of producers' streams; without it only a queue's own targets are returned. */
  gate?: RoutingGate;
  versions?: VersionSource;
  /** Longest wait for the version before falling back to Postgres (the cache's own timeout normally fires first). */
  versionWaitMs?: number;
}

const DEFAULT_VERSION_WAIT_MS = 1_000;

/** What routing reads of an event. */
type Routed = Pick<EventRecord, 'queueId'> & { groupKey?: string | null };

/**
 * Which targets an event goes to: the targets of the queue it came through,
 * plus, for an event of a producer's stream, the targets of each partner's
 * receiving queue that the routing gate opens for the event's group key.
 *
 * Read by every partition actor for every record, so it is cached in-process;
 * management writes clear it on every node through the invalidation bus, and
 * `sync()` (called before each batch) drops it when the config version moved,
 * so no batch is routed on a view older than the writes answered before its
 * events were accepted. The TTL bounds staleness if a message is lost.
 */
export class RouteTable {
  private readonly cache: TtlCache<RouteTarget[]>;
  private version: number | null = null;
  /** The latest version read (running or done; reads run one after another), and the one queued behind it (see sync). */
  private last: Promise<void> = Promise.resolve();
  private queued: Promise<void> | null = null;

  private readonly repo: TopologyRepo;
  private readonly defaultTimeoutMs: number;
  private readonly options: RouteTableOptions;
  constructor(
    repo: TopologyRepo,
    ttlMs: number,
    defaultTimeoutMs: number,
    options: RouteTableOptions = {},
  ) {
    this.repo = repo;
    this.defaultTimeoutMs = defaultTimeoutMs;
    this.options = options;
    this.cache = new TtlCache(ttlMs);
  }

  /**
   * Makes the in-process view at least as new as the cluster's config version
   * now. A batch is fetched from the log after its events were accepted, and a
   * write bumps the version before it answers, so calling this when a batch
   * arrives covers every write answered before any event of the batch was
   * accepted. Never throws: when the version cannot be read within
   * `versionWaitMs` (Redis away) the view is dropped and rebuilt from
   * Postgres, which is slower but never stale.
   *
   * Partition actors call this concurrently. At most one read runs at a time
   * (results apply in order, so the view never moves back to an older
   * version), and every caller that comes while one runs shares the single
   * read queued behind it: that read starts after they called, so it sees any
   * write answered before, and a slow Redis costs each caller at most two
   * bounded reads instead of one per partition in a row.
   */
  sync(): Promise<void> {
    if (!this.options.versions) return Promise.resolve();
    // A read that has not started yet serves every caller that comes before it starts.
    if (this.queued) return this.queued;
    const next = this.last.then(() => {
      this.queued = null; // starting now: later callers need the read after this one
      return this.readVersion();
    });
    this.queued = next;
    this.last = next;
    return next;
  }

  private async readVersion(): Promise<void> {
    let version: number | null;
    try {
      version = await withinMs(this.options.versions!.currentVersion(), this.options.versionWaitMs ?? DEFAULT_VERSION_WAIT_MS);
    } catch {
      version = null;
    }
    if (version !== null && version === this.version) return;
    this.version = version;
    this.cache.clear();
    this.options.gate?.useVersion(version);
  }

  /**
   * The targets of `record` when the answer is at hand (its queue's targets
   * cached, no routing gate to ask: none configured, or no group key), without
   * a promise; undefined otherwise (ask targetsFor). Delivery routes every
   * record it reads: an await per record was ~0.65 KB of garbage per delivered
   * event in async frames and promises for an answer already in memory
   * (bench/results/e2e-profile.md).
   */
  cachedTargets(record: Routed): RouteTarget[] | undefined {
    return this.gateFor(record) ? undefined : this.cache.get(record.queueId);
  }

  /** The targets one event goes to. */
  async targetsFor(record: Routed): Promise<RouteTarget[]> {
    const own = await this.queueTargets(record.queueId);
    const gate = this.gateFor(record);
    if (!gate) return own;
    const open = await gate.open(record.queueId, record.groupKey!);
    if (!open) return own;
    const targets = [...own];
    const seen = new Set(own.map((t) => t.id));
    const { stream } = open;
    for (const sub of open.subscriptions) {
      const via: PartnerRoute = {
        producerWorkspaceId: stream.producerWorkspaceId,
        producerTenantPublicId: stream.producerTenantPublicId,
        catalogEntryPublicId: stream.catalogEntryPublicId,
        integrationPublicId: sub.integrationPublicId,
        receivingWorkspaceId: sub.receivingWorkspaceId,
        receivingTenantPublicId: sub.receivingTenantPublicId,
        receivingQueueId: sub.receivingQueueId,
        receivingQueueName: sub.receivingQueueName,
      };
      for (const target of await this.queueTargets(sub.receivingQueueId)) {
        if (seen.has(target.id)) continue;
        seen.add(target.id);
        targets.push({ ...target, via });
      }
    }
    return targets;
  }

  /**
   * The routing gate to ask about `record`, or null when only its queue's own
   * targets apply: no gate configured, or no group key (no activation can match
   * one, docs/api.md#producer-api-waas: nothing goes to partners).
   */
  private gateFor(record: Routed): RoutingGate | null {
    return this.options.gate && record.groupKey ? this.options.gate : null;
  }

  private queueTargets(queueId: string): Promise<RouteTarget[]> {
    return this.cache.getOrLoad(queueId, async () =>
      (await this.repo.targetsOfQueue(queueId)).map((t) => ({
        id: t.id,
        publicId: t.publicId,
        name: t.name,
        url: new URL(t.url),
        settings: withTargetDefaults(t.settings, this.defaultTimeoutMs),
        disabled: t.disabledAt !== null,
      })),
    );
  }

  invalidate(): void {
    this.cache.clear();
    this.options.gate?.clear();
  }
}
