import { TtlCache } from '../../cache/ttl-cache.js';
import type { EventRecord } from '../../event-log/event-record.js';
import { withQueueDefaults } from '../../routing/queue-settings.js';
import type { QueueLookupRepo } from '../../storage/queue-lookup-repo.js';
import type { SigningKeyRepo } from '../../storage/signing-key-repo.js';
import type { SigningKey } from './signing.js';

/** How the deliveries of one queue are signed right now. */
export interface SigningPlan {
  /** The queue signs outbound deliveries with HMAC v1 + v2 (outboundSigning `hmac`). */
  hmac: boolean;
  /** The queue signs with Standard Webhooks headers (outboundSigning `standard`). */
  standard: boolean;
  /** The workspace's newest active signing key, or null when it has none. */
  key: SigningKey | null;
  /** Every active signing key, newest first: a `standard` delivery carries one signature per key (rotation). */
  keys: readonly SigningKey[];
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
  private readonly keys: TtlCache<readonly SigningKey[]>;

  constructor(
    private readonly queueRepo: QueueLookupRepo,
    private readonly keyRepo: SigningKeyRepo,
    ttlMs: number,
  ) {
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
      if (keys !== undefined) return { ...base, key: keys[0] ?? null, keys };
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
    const keys = await this.keys.getOrLoad(record.workspaceId, async () =>
      (await this.keyRepo.active(record.workspaceId)).map((k) => ({ keyId: k.keyId, secret: k.secret })),
    );
    return { ...base, key: keys[0] ?? null, keys };
  }

  invalidate(): void {
    this.queues.clear();
    this.keys.clear();
  }
}

type SigningPlanBase = Omit<SigningPlan, 'key' | 'keys'>;
