import { Admin } from '@platformatic/kafka';
import type { CacheStore } from '../../cache/cache-store.js';
import type { Config } from '../../config/schema.js';
import type { Logger } from '../../observability/logger.js';
import { kafkaErrorText } from './kafka-failure.js';
import { closeClient, kafkaClientOptions, type KafkaSecurity } from './kafka-options.js';

/** A member's mark lives this long unless renewed. */
const MARK_TTL_MS = 1_500;
const RENEW_EVERY_MS = 400;
const CHECK_EVERY_MS = 500;

/**
 * Faster takeover from a delivery node that died: the Kafka coordinator only
 * notices a member is gone when its session times out (kafka.sessionTimeoutMs,
 * 10 s by default, and brokers refuse less than 6 s), and its partitions wait
 * that long. Every delivery node of the group also renews a short-lived mark
 * in the shared cache (Redis); each node checks the group's members, and a
 * member whose mark it saw before and which has now expired (no renewal for
 * 1.5 s: the process is gone or frozen) is removed from the group at once
 * (LeaveGroup on its behalf), which starts the rebalance that hands its
 * partitions to the others.
 *
 * Only members seen alive before are ever removed, so a member that does not
 * take part (another version, a tool joining the group) is left alone; and
 * when this node's own mark is missing too, the cache was flushed or is away,
 * and nobody is removed. A node removed by mistake (a long pause) simply joins
 * again: delivery is at-least-once either way.
 */
export class GroupLiveness {
  private readonly admin: Admin;
  private readonly seenAlive = new Set<string>();
  private memberId: string | null = null;
  private renewTimer: NodeJS.Timeout | null = null;
  private checkTimer: NodeJS.Timeout | null = null;
  private checking = false;

  private readonly settings: Readonly<Config['kafka']>;
  private readonly cache: CacheStore;
  private readonly log: Logger;
  constructor(
    settings: Readonly<Config['kafka']>,
    cache: CacheStore,
    log: Logger,
    security: KafkaSecurity = {},
  ) {
    this.settings = settings;
    this.cache = cache;
    this.log = log;
    this.admin = new Admin(kafkaClientOptions(settings, security, 1));
  }

  private key(memberId: string): string {
    return `kafka-member:${this.settings.groupId}:${memberId}`;
  }

  /** This node is (now) `memberId` in the group: its mark is renewed from here on. */
  joined(memberId: string | null): void {
    if (memberId === this.memberId) return;
    const previous = this.memberId;
    this.memberId = memberId;
    if (previous) void this.cache.delete(this.key(previous)).catch(() => {});
    void this.renew();
    this.renewTimer ??= setInterval(() => void this.renew(), RENEW_EVERY_MS);
    this.checkTimer ??= setInterval(() => void this.check(), CHECK_EVERY_MS);
    this.renewTimer.unref();
    this.checkTimer.unref();
  }

  private async renew(): Promise<void> {
    if (!this.memberId) return;
    await this.cache.set(this.key(this.memberId), '1', MARK_TTL_MS).catch(() => {});
  }

  private async check(): Promise<void> {
    if (this.checking || !this.memberId) return;
    this.checking = true;
    try {
      const group = (await this.admin.describeGroups({ groups: [this.settings.groupId] })).get(this.settings.groupId);
      if (!group) return;
      const others = [...group.members.keys()].filter((id) => id !== this.memberId);
      // Our own mark gone too: the cache lost its keys (flush, failover); judge nobody.
      if ((await this.cache.get(this.key(this.memberId))) === null) return;
      for (const id of others) {
        const alive = (await this.cache.get(this.key(id))) !== null;
        if (alive) {
          this.seenAlive.add(id);
        } else if (this.seenAlive.has(id)) {
          this.seenAlive.delete(id);
          await this.admin.removeMembersFromConsumerGroup({ groupId: this.settings.groupId, members: [{ memberId: id, reason: 'streamgate: no liveness mark' }] });
          this.log.info({ member: id }, 'removed a delivery node that stopped renewing its liveness mark; its partitions move now');
        }
      }
      for (const id of this.seenAlive) if (!group.members.has(id)) this.seenAlive.delete(id);
    } catch (err) {
      this.log.debug({ err: kafkaErrorText(err) }, 'group liveness check failed');
    } finally {
      this.checking = false;
    }
  }

  async stop(): Promise<void> {
    if (this.renewTimer) clearInterval(this.renewTimer);
    if (this.checkTimer) clearInterval(this.checkTimer);
    this.renewTimer = this.checkTimer = null;
    if (this.memberId) await this.cache.delete(this.key(this.memberId)).catch(() => {});
    this.memberId = null;
    await closeClient(this.admin);
  }
}
