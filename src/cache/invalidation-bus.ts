import { Redis } from 'ioredis';
import type { Logger } from '../observability/logger.js';

/**
 * Tells every node that configuration changed. A management write bumps a
 * version counter in Redis and publishes it; subscribers drop their in-process
 * caches. Readers that must never act on a stale view (the delivery gate) can
 * also compare `currentVersion()` with the version their cache was built at.
 */
export class InvalidationBus {
  private readonly listeners = new Set<(scope: string) => void>();
  private subscriber: Redis | null = null;

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly log: Logger,
  ) {}

  private get channel(): string {
    return `${this.prefix}invalidate`;
  }

  private get versionKey(): string {
    return `${this.prefix}config:version`;
  }

  async start(): Promise<void> {
    this.subscriber = this.redis.duplicate();
    this.subscriber.on('message', (_channel: string, scope: string) => this.emitLocal(scope));
    this.subscriber.on('error', (err: Error) => this.log.warn({ err: err.message }, 'invalidation subscriber error'));
    await this.subscriber.subscribe(this.channel);
  }

  onInvalidate(listener: (scope: string) => void): void {
    this.listeners.add(listener);
  }

  /** Called after a committed write: bumps the version, then notifies every node. */
  async publish(scope: string): Promise<void> {
    await this.redis.incr(this.versionKey);
    this.emitLocal(scope);
    await this.redis.publish(this.channel, scope);
  }

  async currentVersion(): Promise<number> {
    return Number((await this.redis.get(this.versionKey)) ?? 0);
  }

  private emitLocal(scope: string): void {
    for (const listener of this.listeners) listener(scope);
  }

  async stop(): Promise<void> {
    if (this.subscriber) {
      this.subscriber.disconnect();
      this.subscriber = null;
    }
  }
}
