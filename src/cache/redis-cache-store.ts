import { redisErrorChannel } from '../observability/channels.js';
import { Redis } from 'ioredis';
import type { Logger } from '../observability/logger.js';
import type { CacheStore } from './cache-store.js';

// Compare-and-delete must be atomic: another node may have taken the key
// between a GET and a DEL.
const DELETE_IF_EQUALS = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end`;

const SET_IF_EQUALS_OR_ABSENT = `
local v = redis.call('GET', KEYS[1])
if v == ARGV[1] or v == false then
  redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
  return 1
end
return 0`;

/** The cache port on Redis: shared by every node of the cluster. */
export class RedisCacheStore implements CacheStore {
  readonly redis: Redis;
  private subscriber: Redis | null = null;
  private readonly listeners = new Map<string, Array<(message: string) => void>>();

  constructor(
    url: string,
    private readonly prefix: string,
    private readonly log: Logger,
  ) {
    this.redis = new Redis(url, { maxRetriesPerRequest: 3, enableAutoPipelining: true });
    this.redis.on('error', (err: Error) => {
      if (redisErrorChannel.hasSubscribers) redisErrorChannel.publish((err as NodeJS.ErrnoException).code ?? 'error');
      this.log.warn({ err: err.message }, 'redis error');
    });
  }

  private k(key: string): string {
    return this.prefix + key;
  }

  async get(key: string): Promise<string | null> {
    return this.redis.get(this.k(key));
  }

  async set(key: string, value: string, ttlMs?: number): Promise<void> {
    if (ttlMs !== undefined) await this.redis.set(this.k(key), value, 'PX', Math.max(1, Math.ceil(ttlMs)));
    else await this.redis.set(this.k(key), value);
  }

  async setIfAbsent(key: string, value: string, ttlMs: number): Promise<boolean> {
    return (await this.redis.set(this.k(key), value, 'PX', Math.max(1, Math.ceil(ttlMs)), 'NX')) === 'OK';
  }

  async setIfEqualsOrAbsent(key: string, expected: string, value: string, ttlMs: number): Promise<boolean> {
    return (await this.redis.eval(SET_IF_EQUALS_OR_ABSENT, 1, this.k(key), expected, value, String(Math.max(1, Math.ceil(ttlMs))))) === 1;
  }

  async deleteIfEquals(key: string, expected: string): Promise<boolean> {
    return (await this.redis.eval(DELETE_IF_EQUALS, 1, this.k(key), expected)) === 1;
  }

  async delete(key: string): Promise<void> {
    await this.redis.del(this.k(key));
  }

  async incr(key: string, by = 1, ttlMs?: number): Promise<number> {
    if (ttlMs === undefined) return this.redis.incrby(this.k(key), by);
    const [[, value]] = (await this.redis.multi().incrby(this.k(key), by).pexpire(this.k(key), Math.ceil(ttlMs)).exec()) as [[Error | null, number]];
    return value;
  }

  async getCounters(keys: string[]): Promise<number[]> {
    if (keys.length === 0) return [];
    const values = await this.redis.mget(keys.map((key) => this.k(key)));
    return values.map((v) => (v === null ? 0 : Number(v)));
  }

  async publish(channel: string, message: string): Promise<void> {
    await this.redis.publish(this.k(channel), message);
  }

  async subscribe(channel: string, listener: (message: string) => void): Promise<void> {
    if (!this.subscriber) {
      this.subscriber = this.redis.duplicate();
      this.subscriber.on('error', (err: Error) => {
        if (redisErrorChannel.hasSubscribers) redisErrorChannel.publish((err as NodeJS.ErrnoException).code ?? 'error');
        this.log.warn({ err: err.message }, 'redis subscriber error');
      });
      this.subscriber.on('message', (ch: string, message: string) => {
        for (const fn of this.listeners.get(ch) ?? []) fn(message);
      });
    }
    const full = this.k(channel);
    const list = this.listeners.get(full) ?? [];
    list.push(listener);
    this.listeners.set(full, list);
    if (list.length === 1) await this.subscriber.subscribe(full);
  }

  async close(): Promise<void> {
    this.subscriber?.disconnect();
    this.subscriber = null;
    this.redis.disconnect();
  }
}
