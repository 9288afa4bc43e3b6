/**
 * Tracks which offsets of one partition are finished, to know how far the
 * consumer group may commit. Offsets arrive in increasing order; they finish in
 * any order. The commit point is the lowest unfinished offset (or one past the
 * highest seen when all are finished): committing it never skips unfinished work.
 *
 *   seen:     10 11 12 13 14
 *   finished:  x     x  x        -> commit 11 (11 still running)
 */
export class OffsetTracker {
  private readonly order: bigint[] = [];
  private head = 0;
  private readonly finished = new Set<bigint>();
  private next: bigint | null = null;

  /** Highest offset seen so far, or null. Replays at or below it are duplicates. */
  get highestSeen(): bigint | null {
    return this.next === null ? null : this.next - 1n;
  }

  get pending(): number {
    return this.order.length - this.head;
  }

  add(offset: bigint): void {
    this.order.push(offset);
    this.next = offset + 1n;
  }

  finish(offset: bigint): void {
    this.finished.add(offset);
    while (this.head < this.order.length && this.finished.has(this.order[this.head]!)) {
      this.finished.delete(this.order[this.head]!);
      this.head++;
    }
    // Compact now and then so the array does not grow without bound.
    if (this.head > 4096 && this.head * 2 > this.order.length) {
      this.order.splice(0, this.head);
      this.head = 0;
    }
  }

  /** The offset the group may resume from, or null before anything was seen. */
  commitPoint(): bigint | null {
    if (this.head < this.order.length) return this.order[this.head]!;
    return this.next;
  }
}
