/**
 * Wakes things at their due time with one timer for all of them: a binary
 * min-heap ordered by due time. A partition's parked lanes can number in the
 * tens of thousands; one timer per lane would work but a heap keeps the timer
 * list short and `clear()` cheap when the partition is revoked.
 */
export class DueQueue<T> {
  private readonly heap: Array<{ at: number; item: T }> = [];
  private timer: NodeJS.Timeout | null = null;
  private timerAt = Infinity;

  private readonly fire: (item: T) => void;
  private readonly now: () => number;
  constructor(
    fire: (item: T) => void,
    now: () => number = Date.now,
  ) {
    this.fire = fire;
    this.now = now;
  }

  get size(): number {
    return this.heap.length;
  }

  schedule(item: T, at: number): void {
    this.heap.push({ at, item });
    this.up(this.heap.length - 1);
    this.arm();
  }

  clear(): void {
    this.heap.length = 0;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.timerAt = Infinity;
  }

  private arm(): void {
    const next = this.heap[0];
    if (!next || next.at >= this.timerAt) return;
    if (this.timer) clearTimeout(this.timer);
    this.timerAt = next.at;
    // setTimeout takes at most ~24.8 days; a later wake-up just re-arms.
    const delay = Math.min(Math.max(0, next.at - this.now()), 2_000_000_000);
    this.timer = setTimeout(() => this.run(), delay);
    this.timer.unref();
  }

  private run(): void {
    this.timer = null;
    this.timerAt = Infinity;
    const now = this.now();
    const due: T[] = [];
    while (this.heap.length > 0 && this.heap[0]!.at <= now) due.push(this.pop());
    this.arm();
    for (const item of due) this.fire(item);
  }

  private pop(): T {
    const top = this.heap[0]!;
    const last = this.heap.pop()!;
    if (this.heap.length > 0) {
      this.heap[0] = last;
      this.down(0);
    }
    return top.item;
  }

  private up(i: number): void {
    const h = this.heap;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (h[parent]!.at <= h[i]!.at) break;
      [h[parent], h[i]] = [h[i]!, h[parent]!];
      i = parent;
    }
  }

  private down(i: number): void {
    const h = this.heap;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let min = i;
      if (l < h.length && h[l]!.at < h[min]!.at) min = l;
      if (r < h.length && h[r]!.at < h[min]!.at) min = r;
      if (min === i) return;
      [h[min], h[i]] = [h[i]!, h[min]!];
      i = min;
    }
  }
}
