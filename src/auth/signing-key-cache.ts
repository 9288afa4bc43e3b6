import { TtlCache } from '../cache/ttl-cache.js';
import type { SigningKeyRepo } from '../storage/signing-key-repo.js';

/**
 * The active signing keys of each workspace (key id → secret), cached
 * in-process like API keys: a hit costs no promise, management writes clear it
 * on every node through the invalidation bus, the TTL bounds staleness.
 * Several keys may be active at once (rotation); any of them verifies.
 */
export class SigningKeyCache {
  private readonly cache: TtlCache<ReadonlyMap<string, string>>;

  private readonly repo: SigningKeyRepo;
  constructor(
    repo: SigningKeyRepo,
    ttlMs: number,
  ) {
    this.repo = repo;
    this.cache = new TtlCache(ttlMs);
  }

  activeKeys(workspaceId: string): ReadonlyMap<string, string> | Promise<ReadonlyMap<string, string>> {
    const hit = this.cache.get(workspaceId);
    if (hit !== undefined) return hit;
    return this.cache.getOrLoad(workspaceId, async () => new Map((await this.repo.active(workspaceId)).map((k) => [k.keyId, k.secret])));
  }

  invalidate(): void {
    this.cache.clear();
  }
}
