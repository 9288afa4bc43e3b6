import { TtlCache } from '../cache/ttl-cache.js';
import { ServiceError } from '../errors.js';
import type { KeyRepo, StoredKey } from '../storage/key-repo.js';
import type { KeyUsage } from './key-usage.js';
import { parseApiKey, secretMatches } from './api-key.js';

/**
 * Turns a presented `qak_…` key into the stored key it names, or refuses it.
 * Lookups are cached by key id (never by the secret); the secret is checked on
 * every request against the stored hash in constant time.
 */
export class KeyAuthenticator {
  private readonly cache: TtlCache<StoredKey | null>;

  private readonly repo: KeyRepo;
  readonly usage: KeyUsage | null;
  constructor(
    repo: KeyRepo,
    ttlMs: number,
    /** Where a successful authentication is noted (the key list's lastUsedAt). */
    usage: KeyUsage | null = null,
  ) {
    this.repo = repo;
    this.usage = usage;
    this.cache = new TtlCache(ttlMs);
  }

  async authenticate(presented: string): Promise<StoredKey> {
    const parsed = parseApiKey(presented);
    if (!parsed) throw new ServiceError('invalid_api_key');
    const stored = await this.lookup(parsed.keyId);
    if (!stored || stored.revoked || !secretMatches(parsed.secret, stored.secretHash)) {
      throw new ServiceError('invalid_api_key');
    }
    this.usage?.used(stored.keyId);
    return stored;
  }

  /**
   * The stored key of a key id: synchronously on a cache hit (the hot path of
   * ingress pays no promise for it), else loaded once for all concurrent callers.
   * Null when no such key exists. The secret is not checked here.
   */
  lookup(keyId: string): StoredKey | null | Promise<StoredKey | null> {
    const hit = this.cache.get(keyId);
    return hit !== undefined ? hit : this.cache.getOrLoad(keyId, () => this.repo.byKeyId(keyId));
  }

  invalidate(): void {
    this.cache.clear();
  }
}
