/**
 * At most `limit` requests in flight per origin; the rest wait in FIFO order.
 * The dispatcher takes a slot before an attempt's deadline starts, so time
 * spent queueing behind a slow receiver's other requests is not charged to
 * the attempt (otherwise a backlog against a slow receiver would time out
 * attempts that never reached it, and park them).
 */
export class OriginSlots {
  private readonly origins = new Map<string, { active: number; waiting: Array<() => void> }>();

  private readonly limit: number;
  constructor(limit: number) {
    this.limit = limit;
  }

  /** A slot now, or null when the origin is at its limit (the common case costs no promise). */
  tryAcquire(origin: string): (() => void) | null {
    let entry = this.origins.get(origin);
    if (!entry) {
      entry = { active: 0, waiting: [] };
      this.origins.set(origin, entry);
    }
    if (entry.active >= this.limit) return null;
    entry.active++;
    return this.releaser(origin, entry);
  }

  async acquire(origin: string): Promise<() => void> {
    const now = this.tryAcquire(origin);
    if (now) return now;
    const entry = this.origins.get(origin)!;
    await new Promise<void>((resolve) => entry.waiting.push(resolve));
    return this.releaser(origin, entry);
  }

  private releaser(origin: string, entry: { active: number; waiting: Array<() => void> }): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = entry.waiting.shift();
      // The slot passes straight to the next waiter, so `active` stays as it is.
      if (next) next();
      else if (--entry.active === 0) this.origins.delete(origin);
    };
  }

  /** Requests in flight per origin (origins with none are not kept). */
  inFlight(): Array<[origin: string, active: number]> {
    const out: Array<[string, number]> = [];
    for (const [origin, entry] of this.origins) out.push([origin, entry.active]);
    return out;
  }

  /** Requests waiting for a slot, over all origins. */
  get waiting(): number {
    let n = 0;
    for (const entry of this.origins.values()) n += entry.waiting.length;
    return n;
  }
}
