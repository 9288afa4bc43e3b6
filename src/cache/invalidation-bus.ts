import type { CacheStore } from './cache-store.js';

const CHANNEL = 'invalidate';
const VERSION_KEY = 'config:version';

/**
 * Tells every node that configuration changed. A management write bumps a
 * version counter and publishes its scope; subscribers drop their in-process
 * caches. Readers that must never act on a stale view (the delivery gate)
 * compare `currentVersion()` with the version their view was built at: the
 * counter is bumped before the write's response, so it is never behind.
 */
export class InvalidationBus {
  private readonly listeners = new Set<(scope: string) => void>();

  private readonly store: CacheStore;
  constructor(store: CacheStore) {
    this.store = store;
  }

  async start(): Promise<void> {
    await this.store.subscribe(CHANNEL, (scope) => this.emitLocal(scope));
  }

  onInvalidate(listener: (scope: string) => void): void {
    this.listeners.add(listener);
  }

  /** Called after a committed write: bumps the version, then notifies every node. */
  async publish(scope: string): Promise<void> {
    await this.store.incr(VERSION_KEY);
    this.emitLocal(scope);
    await this.store.publish(CHANNEL, scope);
  }

  async currentVersion(): Promise<number> {
    return Number((await this.store.get(VERSION_KEY)) ?? 0);
  }

  private emitLocal(scope: string): void {
    for (const listener of this.listeners) listener(scope);
  }

  async stop(): Promise<void> {
    this.listeners.clear();
  }
}
