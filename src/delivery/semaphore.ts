/** At most `limit` holders at once; the rest wait in FIFO order. */
export class Semaphore {
  private active = 0;
  private readonly waiting: Array<() => void> = [];

  private readonly limit: number;
  constructor(limit: number) {
    this.limit = limit;
  }

  async acquire(): Promise<() => void> {
    if (this.active < this.limit) this.active++;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      if (next) next();
      else this.active--;
    };
  }
}

/** A semaphore per key, each allowing `limit` holders, made on first use (keys: a bounded set such as target ids). */
export class KeyedSemaphores {
  private readonly byKey = new Map<string, Semaphore>();

  private readonly limit: number;
  constructor(limit: number) {
    this.limit = limit;
  }

  of(key: string): Semaphore {
    let semaphore = this.byKey.get(key);
    if (!semaphore) this.byKey.set(key, (semaphore = new Semaphore(this.limit)));
    return semaphore;
  }
}
