import type { Logger } from '../observability/logger.js';

/** How often one node writes a key's last-used time at most. */
const NOTE_EVERY_MS = 60_000;
const FLUSH_EVERY_MS = 5_000;

/**
 * Records when API keys are used, for the key list's `lastUsedAt`, without a
 * write per request: a key is noted at most once a minute per node, and the
 * noted keys are written in one UPDATE every 5 s. The hot path pays one map
 * lookup. Approximate by design (to the minute); a node that stops loses at
 * most its last 5 s of notes.
 */
export class KeyUsage {
  private readonly noted = new Map<string, number>();
  private pending = new Set<string>();
  private readonly timer: NodeJS.Timeout;

  private readonly write: (keyIds: string[]) => Promise<void>;
  private readonly log: Logger;
  private readonly now: () => number;
  constructor(
    write: (keyIds: string[]) => Promise<void>,
    log: Logger,
    now: () => number = Date.now,
  ) {
    this.write = write;
    this.log = log;
    this.now = now;
    this.timer = setInterval(() => void this.flush(), FLUSH_EVERY_MS);
    this.timer.unref();
  }

  /** `keyId` authenticated a request just now. */
  used(keyId: string): void {
    const at = this.now();
    const last = this.noted.get(keyId);
    if (last !== undefined && at - last < NOTE_EVERY_MS) return;
    this.noted.set(keyId, at);
    this.pending.add(keyId);
  }

  async flush(): Promise<void> {
    if (this.pending.size === 0) return;
    const keyIds = [...this.pending];
    this.pending = new Set();
    try {
      await this.write(keyIds);
    } catch (err) {
      // Not worth failing anything for: the next use notes the key again.
      for (const id of keyIds) this.noted.delete(id);
      this.log.debug({ err, keys: keyIds.length }, 'could not record key use');
    }
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }
}
