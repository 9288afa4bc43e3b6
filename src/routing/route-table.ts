import { TtlCache } from '../cache/ttl-cache.js';
import type { EventRecord } from '../log/event-record.js';
import type { TopologyRepo } from '../storage/topology-repo.js';
import { withTargetDefaults, type TargetSettings } from './target-settings.js';

/** A target as delivery sees it: where to send and how. */
export interface RouteTarget {
  id: string;
  publicId: string;
  name: string;
  url: URL;
  settings: TargetSettings;
  disabled: boolean;
}

/**
 * Which targets a queue delivers to. Read by every partition actor for every
 * record, so it is cached in-process; management writes clear it on every node
 * through the invalidation bus, and the TTL bounds staleness if a message is lost.
 */
export class RouteTable {
  private readonly cache: TtlCache<RouteTarget[]>;

  constructor(
    private readonly repo: TopologyRepo,
    ttlMs: number,
    private readonly defaultTimeoutMs: number,
  ) {
    this.cache = new TtlCache(ttlMs);
  }

  /** The targets one event goes to. */
  targetsFor(record: Pick<EventRecord, 'queueId'>): Promise<RouteTarget[]> {
    return this.queueTargets(record.queueId);
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
  }
}
