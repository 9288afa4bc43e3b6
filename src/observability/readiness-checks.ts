import postgres from 'postgres';
import type { RedisCacheStore } from '../cache/redis-cache-store.js';
import type { EventLogBackend } from '../event-log/event-log.js';
import type { EventLogReader } from '../event-log/event-log.js';
import type { Check } from './readiness.js';

/**
 * The checks behind /readyz, one per dependency a role needs (see
 * readiness.ts for how they are run). Each throws an Error whose message is
 * the cause an operator reads in the /readyz body: never a password.
 */

/**
 * `select 1` on a connection of its own, so a busy pool does not make the node
 * look unready (taking it out of the balancer when it is merely loaded), and a
 * probe stuck on a dead link is dropped with its connection (`signal`).
 */
export class PostgresCheck {
  private sql: postgres.Sql | null = null;
  private closed = false;

  private readonly url: string;
  private readonly timeoutMs: number;
  constructor(
    url: string,
    timeoutMs: number,
  ) {
    this.url = url;
    this.timeoutMs = timeoutMs;
  }

  readonly check: Check = async (signal) => {
    if (this.closed) throw new Error('stopped');
    const sql = (this.sql ??= postgres(this.url, {
      max: 1,
      onnotice: () => {},
      idle_timeout: 60,
      connect_timeout: Math.max(1, Math.ceil(this.timeoutMs / 1000)),
    }));
    signal.addEventListener('abort', () => {
      // Timed out: this connection may hang on a dead link; the next round opens another.
      if (this.sql === sql) this.sql = null;
      void sql.end({ timeout: 0 }).catch(() => {});
    }, { once: true });
    await sql`select 1`;
  };

  async close(): Promise<void> {
    this.closed = true;
    const sql = this.sql;
    this.sql = null;
    await sql?.end({ timeout: 0 }).catch(() => {});
  }
}

/** PING on the node's own Redis connection: the one its requests use. */
export function redisCheck(cache: RedisCacheStore): Check {
  return async () => {
    try {
      await cache.ping();
    } catch (err) {
      // ioredis gives up on a command with "max retries" while it reconnects: the connection's own error says why.
      throw new Error(cache.lastConnectionError ?? (err as Error).message, { cause: err });
    }
  };
}

/** The event topic's metadata from the brokers (every partition has a leader). */
export function kafkaCheck(eventLog: EventLogBackend): Check | null {
  const probe = eventLog.probe?.bind(eventLog);
  return probe ? async () => probe() : null;
}

/** This delivery node is a member of the consumer group (joined, heartbeats answered). */
export function consumerGroupCheck(reader: EventLogReader): Check {
  return async () => {
    const membership = reader.membership();
    if (!membership.joined) throw new Error(membership.error ?? 'not a member of the consumer group');
    return { partitions: membership.partitions };
  };
}
