import { TtlCache } from '../cache/ttl-cache.js';
import { withQueueDefaults, type QueueSettings } from '../routing/queue-settings.js';
import type { TopologyRepo } from '../storage/topology-repo.js';

/** What ingress needs to know about the queue a request names. */
export interface QueueView {
  tenantPublicId: string;
  workspaceId: string;
  licenseId: string;
  workspaceArchived: boolean;
  queueId: string;
  queuePublicId: string;
  queueName: string;
  settings: QueueSettings;
}

/**
 * Resolves `/events/{tenant}/{queue}` to a queue, cached in-process (hits are
 * the common case: a sender posts to a handful of queues). Misses are cached
 * too, so a flood to an unknown queue costs one query per TTL, not one per post.
 */
export class QueueDirectory {
  private readonly cache: TtlCache<QueueView | null>;

  constructor(
    private readonly repo: TopologyRepo,
    ttlMs: number,
  ) {
    this.cache = new TtlCache(ttlMs);
  }

  resolve(tenantPublicId: string, queueName: string): Promise<QueueView | null> {
    return this.cache.getOrLoad(`${tenantPublicId}\n${queueName}`, async () => {
      const workspace = await this.repo.workspaceByPublicId(tenantPublicId);
      if (!workspace) return null;
      const queue = await this.repo.queueByName(workspace.id, queueName);
      if (!queue) return null;
      return {
        tenantPublicId,
        workspaceId: workspace.id,
        licenseId: workspace.licenseId,
        workspaceArchived: workspace.archived,
        queueId: queue.id,
        queuePublicId: queue.publicId,
        queueName: queue.name,
        settings: withQueueDefaults(queue.settings),
      };
    });
  }

  invalidate(): void {
    this.cache.clear();
  }
}
