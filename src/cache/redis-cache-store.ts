import { Redis, ReplyError } from 'ioredis';
import { redisErrorChannel } from '../observability/channels.js';
import type { Logger } from '../observability/logger.js';
import type { CacheStore } from './cache-store.js';
import { CacheUnavailableError } from './cache-unavailable.js';

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

/** The message a subscriber hears after its link came back (see subscribe). */
export const RESUBSCRIBED = '*';

/** A Redis that does not answer within this long is treated as away (redis.commandTimeoutMs). */
export const DEFAULT_COMMAND_TIMEOUT_MS = 500;

/**
 * The cache port on Redis: shared by every node of the cluster.
 *
 * A Redis that is away must cost a caller at most `commandTimeoutMs`, never
 * the length of the outage: ioredis would otherwise queue commands through
 * its reconnects (an awaited GET held delivery for the whole cut). So every
 * command has a timeout, a command issued while the link is down (after it
 * was up once) fails at once instead of joining the offline queue, and a
 * link that went silent (a blackholed host: TCP up, no reply) is dropped and
 * redialled, which turns the silence into "not connected", i.e. fast
 * failures, until Redis answers again. Every failure that is not a Redis
 * reply is thrown as CacheUnavailableError.
 */
export class RedisCacheStore implements CacheStore {
  readonly redis: Redis;
  private subscriber: Redis | null = null;
  private readonly listeners = new Map<string, Array<(message: string) => void>>();
  /** Why the connection is down (e.g. `connect ECONNREFUSED 127.0.0.1:6379`), null while it is up: for /readyz. */
  lastConnectionError: string | null = null;
  private readonly timeoutMs: number;
  private wasReady = false;
  /** Set when this store dropped a silent link, until the redial is ready: fail fast meanwhile. */
  private redialling = false;
  private lastReplyAt = Date.now();

  private readonly prefix: string;
  private readonly log: Logger;
  constructor(
    url: string,
    prefix: string,
    log: Logger,
    commandTimeoutMs = DEFAULT_COMMAND_TIMEOUT_MS,
  ) {
    this.prefix = prefix;
    this.log = log;
    this.timeoutMs = commandTimeoutMs;
    this.redis = new Redis(url, {
      // One retry of a command whose connection dropped; the timeout bounds the whole wait.
      maxRetriesPerRequest: 1,
      commandTimeout: commandTimeoutMs,
      connectTimeout: Math.max(1_000, 2 * commandTimeoutMs),
      // Redial soon (a failover or a blip), at most every second.
      retryStrategy: (times: number) => Math.min(times * 100, 1_000),
      // A dropped link that gets no FIN back (a silent host) is destroyed this soon.
      disconnectTimeout: 100,
      enableAutoPipelining: true,
    });
    this.redis.on('error', (err: Error) => {
      this.lastConnectionError = err.message;
      if (redisErrorChannel.hasSubscribers) redisErrorChannel.publish((err as NodeJS.ErrnoException).code ?? 'error');
      this.log.warn({ err }, 'redis error');
    });
    this.redis.on('ready', () => {
      this.lastConnectionError = null;
      this.wasReady = true;
      this.redialling = false;
      this.lastReplyAt = Date.now();
    });
  }

  /** One PING on the node's own connection (readiness). */
  async ping(): Promise<void> {
    await this.run(() => this.redis.ping());
  }

  private k(key: string): string {
    return this.prefix + key;
  }

  /** Runs one command under the rules above. */
  private async run<T>(command: () => Promise<T>): Promise<T> {
    // Before the first connection the offline queue (bounded by the timeout) lets a starting node wait for Redis.
    // (Redialling: a command timed out with no reply for a whole timeout, and the link is being replaced.)
    if (this.redialling) throw new CacheUnavailableError('redis stopped answering (no reply within redis.commandTimeoutMs); reconnecting');
    if (this.wasReady && this.redis.status !== 'ready') throw new CacheUnavailableError(`redis is not connected (${this.redis.status})`);
    try {
      const value = await command();
      this.lastReplyAt = Date.now();
      return value;
    } catch (err) {
      if (err instanceof ReplyError) {
        this.lastReplyAt = Date.now();
        throw err;
      }
      // Nothing came back on this link for a whole timeout: it is dead, whatever TCP says.
      if (!this.redialling && this.redis.status === 'ready' && Date.now() - this.lastReplyAt >= this.timeoutMs) {
        this.log.warn('redis stopped answering; reconnecting');
        this.redialling = true;
        this.redis.disconnect(true);
      }
      throw new CacheUnavailableError(`redis unavailable: ${(err as Error).message}`, { cause: err });
    }
  }

  async get(key: string): Promise<string | null> {
    return this.run(() => this.redis.get(this.k(key)));
  }

  async set(key: string, value: string, ttlMs?: number): Promise<void> {
    if (ttlMs !== undefined) await this.run(() => this.redis.set(this.k(key), value, 'PX', Math.max(1, Math.ceil(ttlMs))));
    else await this.run(() => this.redis.set(this.k(key), value));
  }

  async setIfAbsent(key: string, value: string, ttlMs: number): Promise<boolean> {
    return (await this.run(() => this.redis.set(this.k(key), value, 'PX', Math.max(1, Math.ceil(ttlMs)), 'NX'))) === 'OK';
  }

  async setIfEqualsOrAbsent(key: string, expected: string, value: string, ttlMs: number): Promise<boolean> {
    return (await this.run(() => this.redis.eval(SET_IF_EQUALS_OR_ABSENT, 1, this.k(key), expected, value, String(Math.max(1, Math.ceil(ttlMs)))))) === 1;
  }

  async deleteIfEquals(key: string, expected: string): Promise<boolean> {
    return (await this.run(() => this.redis.eval(DELETE_IF_EQUALS, 1, this.k(key), expected))) === 1;
  }

  async delete(key: string): Promise<void> {
    await this.run(() => this.redis.del(this.k(key)));
  }

  async incr(key: string, by = 1, ttlMs?: number): Promise<number> {
    if (ttlMs === undefined) return this.run(() => this.redis.incrby(this.k(key), by));
    const [[, value]] = (await this.run(() => this.redis.multi().incrby(this.k(key), by).pexpire(this.k(key), Math.ceil(ttlMs)).exec())) as [[Error | null, number]];
    return value;
  }

  async getCounters(keys: string[]): Promise<number[]> {
    if (keys.length === 0) return [];
    const values = await this.run(() => this.redis.mget(keys.map((key) => this.k(key))));
    return values.map((v) => (v === null ? 0 : Number(v)));
  }

  async publish(channel: string, message: string): Promise<void> {
    await this.run(() => this.redis.publish(this.k(channel), message));
  }

  async subscribe(channel: string, listener: (message: string) => void): Promise<void> {
    if (!this.subscriber) {
      this.subscriber = this.redis.duplicate();
      this.subscriber.on('error', (err: Error) => {
        if (redisErrorChannel.hasSubscribers) redisErrorChannel.publish((err as NodeJS.ErrnoException).code ?? 'error');
        this.log.warn({ err }, 'redis subscriber error');
      });
      this.subscriber.on('message', (ch: string, message: string) => {
        for (const fn of this.listeners.get(ch) ?? []) fn(message);
      });
      // Messages published while the link was down are lost: after a
      // reconnect every channel hears RESUBSCRIBED, so its listeners can
      // drop whatever they cached (the invalidation bus clears everything).
      let subscribedOnce = false;
      this.subscriber.on('ready', () => {
        if (!subscribedOnce) {
          subscribedOnce = true;
          return;
        }
        for (const list of this.listeners.values()) for (const fn of list) fn(RESUBSCRIBED);
      });
    }
    const full = this.k(channel);
    const list = this.listeners.get(full) ?? [];
    list.push(listener);
    this.listeners.set(full, list);
    if (list.length > 1) return;
    try {
      await this.subscriber.subscribe(full);
    } catch (err) {
      // Redis away at start: forget the listener so the caller's retry subscribes again.
      this.listeners.delete(full);
      throw err;
    }
  }

  async close(): Promise<void> {
    this.subscriber?.disconnect();
    this.subscriber = null;
    this.redis.disconnect();
  }
}
