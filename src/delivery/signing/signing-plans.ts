import { TtlCache } from '../../cache/ttl-cache.js';
import type { EventRecord } from '../../event-log/event-record.js';
import { withQueueDefaults } from '../../routing/queue-settings.js';
import type { QueueLookupRepo } from '../../storage/queue-lookup-repo.js';
import { createPrivateKey, type KeyObject } from 'node:crypto';
import type { Logger } from '../../observability/logger.js';
import type { KeyEncryption } from '../../storage/key-encryption.js';
import type { SigningKeyRepo } from '../../storage/signing-key-repo.js';
import type { Ed25519SigningKey, SigningKey, StandardKey } from './signing.js';

/** How the deliveries of one queue are signed right now. */
export interface SigningPlan {
  /** The queue signs outbound deliveries with HMAC v1 + v2 (outboundSigning `hmac`). */
  hmac: boolean;
  /** The queue signs with Standard Webhooks headers (outboundSigning `standard`). */
  standard: boolean;
  /** The workspace's newest active HMAC signing key, or null when it has none (ed25519 keys never are). */
  key: SigningKey | null;
  /**
   * Every active key, newest first, HMAC keys then ed25519 keys: a `standard`
   * delivery carries one signature per key (a v1 entry per HMAC key, a v1a entry per ed25519 key).
   */
  keys: readonly StandardKey[];
  /** Set when the queue recalculates Payments-Signature: the secret its ingress verifies with. */
  paymentsSecret: string | null;
}

const UNSIGNED: SigningPlan = Object.freeze({ hmac: false, standard: false, key: null, keys: [], paymentsSecret: null });

/**
 * Queue signing settings and workspace signing keys, cached in-process for
 * every attempt to read; management writes clear the caches through the
 * invalidation bus and the TTL bounds staleness if a message is lost.
 */
export class SigningPlans {
  private readonly queues: TtlCache<SigningPlanBase | null>;
  private readonly keys: TtlCache<WorkspaceKeys>;

  /**
   * `encryption`: signing.keyEncryptionKey (null when unset). An ed25519 key
   * that cannot be decrypted with it (unset, or another key) signs nothing; the
   * log says so once per key, naming the key id only.
   */
  private readonly queueRepo: QueueLookupRepo;
  private readonly keyRepo: SigningKeyRepo;
  private readonly encryption: KeyEncryption | null;
  private readonly log: Pick<Logger, 'warn'> | null;
  constructor(
    queueRepo: QueueLookupRepo,
    keyRepo: SigningKeyRepo,
    ttlMs: number,
    encryption: KeyEncryption | null = null,
    log: Pick<Logger, 'warn'> | null = null,
  ) {
    this.queueRepo = queueRepo;
    this.keyRepo = keyRepo;
    this.encryption = encryption;
    this.log = log;
    this.queues = new TtlCache(ttlMs);
    this.keys = new TtlCache(ttlMs);
  }

  /** The plan, synchronously when both parts are cached (every attempt asks). */
  planFor(record: Pick<EventRecord, 'queueId' | 'workspaceId'>): SigningPlan | Promise<SigningPlan> {
    const base = this.queues.get(record.queueId);
    if (base === null) return UNSIGNED;
    if (base !== undefined) {
      if (!base.hmac && !base.standard) return { ...UNSIGNED, paymentsSecret: base.paymentsSecret };
      const keys = this.keys.get(record.workspaceId);
      if (keys !== undefined) return { ...base, key: keys.hmac[0] ?? null, keys: keys.all };
    }
    return this.forRecord(record);
  }

  async forRecord(record: Pick<EventRecord, 'queueId' | 'workspaceId'>): Promise<SigningPlan> {
    const base = await this.queues.getOrLoad(record.queueId, async () => {
      const stored = await this.queueRepo.settingsOf(record.queueId);
      if (!stored) return null;
      const s = withQueueDefaults(stored);
      return {
        hmac: s.outboundSigning === 'hmac',
        standard: s.outboundSigning === 'standard',
        paymentsSecret: s.paymentsSignatureRecalculation && s.paymentsSecret ? s.paymentsSecret : null,
      };
    });
    if (!base) return UNSIGNED;
    if (!base.hmac && !base.standard) return { ...UNSIGNED, paymentsSecret: base.paymentsSecret };
    const keys = await this.keys.getOrLoad(record.workspaceId, () => this.loadKeys(record.workspaceId));
    return { ...base, key: keys.hmac[0] ?? null, keys: keys.all };
  }

  invalidate(): void {
    this.queues.clear();
    this.keys.clear();
    this.parsed.clear();
  }

  /**
   * The workspace's keys. ed25519 private keys are decrypted and parsed here,
   * once per key (the KeyObject is kept by key id), never per delivery.
   */
  private async loadKeys(workspaceId: string): Promise<WorkspaceKeys> {
    const [hmacRows, edRows] = await Promise.all([this.keyRepo.active(workspaceId), this.keyRepo.activeEd25519(workspaceId)]);
    const hmac: SigningKey[] = hmacRows.map((k) => ({ keyId: k.keyId, secret: k.secret }));
    const ed: Ed25519SigningKey[] = [];
    for (const row of edRows) {
      let parsed = this.parsed.get(row.keyId);
      if (!parsed) {
        if (!this.encryption) {
          this.warnOnce(row.keyId, 'an ed25519 signing key is active but signing.keyEncryptionKey is not set: its v1a entries are left out');
          continue;
        }
        try {
          const pkcs8 = this.encryption.decrypt(row.privateKeyEncrypted, row.keyId);
          parsed = createPrivateKey({ key: pkcs8, format: 'der', type: 'pkcs8' });
          pkcs8.fill(0);
        } catch {
          this.warnOnce(row.keyId, 'an ed25519 signing key does not decrypt with signing.keyEncryptionKey: its v1a entries are left out');
          continue;
        }
        this.parsed.set(row.keyId, parsed);
      }
      ed.push({ algorithm: 'ed25519', keyId: row.keyId, privateKey: parsed });
    }
    return { hmac, all: [...hmac, ...ed] };
  }

  /**
   * Parsed ed25519 private keys by key id, kept across TTL reloads (a key id's key never
   * changes); cleared with every management write, so a revoked key leaves memory.
   */
  private readonly parsed = new Map<string, KeyObject>();
  private readonly warned = new Set<string>();

  private warnOnce(keyId: string, msg: string): void {
    if (this.warned.has(keyId)) return;
    this.warned.add(keyId);
    this.log?.warn({ keyId }, msg);
  }
}

interface WorkspaceKeys {
  /** Active HMAC keys, newest first. */
  hmac: readonly SigningKey[];
  /** HMAC keys, then ed25519 keys (each newest first): what a `standard` delivery signs with. */
  all: readonly StandardKey[];
}

type SigningPlanBase = Omit<SigningPlan, 'key' | 'keys'>;
