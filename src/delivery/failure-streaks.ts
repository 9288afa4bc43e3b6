/** What FailureStreaks needs from storage (src/storage/target-state-repo.ts). */
export interface StreakStore {
  failing(targetId: string): Promise<Date | null>;
  healthy(targetId: string): Promise<void>;
}

/**
 * docs/delivery.md#delivery-engine: a target that fails continuously for `disableAfterMs` (5 days
 * by default) is disabled. The streak lives on the target's row so every node
 * adds to the same one and any node's success ends it; this class keeps the
 * database out of the hot path: a node writes when a streak starts or ends as
 * it sees it, and while failing re-reads the shared start at most once per
 * `refreshMs` (another node's success may have reset it meanwhile).
 */
export class FailureStreaks {
  private readonly known = new Map<string, { since: number; checkedAt: number }>();
  /** When this node last told the store a target is healthy (another node may have seen it fail). */
  private readonly healthyWrittenAt = new Map<string, number>();

  private readonly store: StreakStore;
  private readonly disableAfterMs: number;
  private readonly refreshMs: number;
  private readonly now: () => number;
  constructor(
    store: StreakStore,
    disableAfterMs: number,
    refreshMs = 60_000,
    now: () => number = Date.now,
  ) {
    this.store = store;
    this.disableAfterMs = disableAfterMs;
    this.refreshMs = refreshMs;
    this.now = now;
  }

  /** An attempt failed; resolves true when the streak has lasted long enough to disable the target. */
  async failed(targetId: string): Promise<boolean> {
    const now = this.now();
    let entry = this.known.get(targetId);
    // Re-read when stale, and before ever answering yes: another node may have
    // ended the streak (a success, or a disable and re-enable) since.
    const overdue = entry !== undefined && now - entry.since >= this.disableAfterMs;
    if (!entry || overdue || now - entry.checkedAt >= this.refreshMs) {
      const since = await this.store.failing(targetId);
      if (since === null) return false; // the target is gone
      entry = { since: since.getTime(), checkedAt: now };
      this.known.set(targetId, entry);
    }
    return now - entry.since >= this.disableAfterMs;
  }

  /** The target was disabled: its streak is over (the store's too, see TargetStateRepo.disable). */
  forget(targetId: string): void {
    this.known.delete(targetId);
  }

  /**
   * An attempt succeeded: the streak is over, here and for the cluster. A
   * node that saw no failure still says so once per `refreshMs`, because the
   * streak may have been started by another node's failures.
   */
  succeeded(targetId: string): Promise<void> | void {
    const now = this.now();
    const wasFailing = this.known.delete(targetId);
    if (!wasFailing && now - (this.healthyWrittenAt.get(targetId) ?? -Infinity) < this.refreshMs) return;
    if (this.healthyWrittenAt.size >= 100_000) this.healthyWrittenAt.clear();
    this.healthyWrittenAt.set(targetId, now);
    return this.store.healthy(targetId);
  }

  /** Since when the target has been failing, as this node last read it. */
  since(targetId: string): number | null {
    return this.known.get(targetId)?.since ?? null;
  }
}
