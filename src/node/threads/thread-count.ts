import { availableParallelism } from 'node:os';
import type { Config } from '../../config/schema.js';

/** How many threads a node runs, and why when that is fewer than asked. */
export interface ThreadPlan {
  threads: number;
  /** Set when the node runs on one thread although more were asked (logged at start). */
  singleBecause: string | null;
}

/**
 * Resolves server.threads: 0 means the cores this process may use
 * (os.availableParallelism(), which honours CPU affinity). The embedded
 * backends stay on one thread: the in-process cache and the embedded log's
 * reader state would each exist once per thread, and threads sharing the
 * LMDB environment would need a cross-thread owner for every partition's
 * offsets (docs/threads.md).
 */
export function planThreads(config: Readonly<Config>, cores: number = availableParallelism()): ThreadPlan {
  const asked = config.server.threads === 0 ? Math.max(1, cores) : config.server.threads;
  if (asked === 1) return { threads: 1, singleBecause: null };
  if (config.kafka.brokers.length === 0 || !config.redis.url || !config.database.url) {
    return { threads: 1, singleBecause: 'the embedded backends (no KAFKA_BROKERS, REDIS_URL or DATABASE_URL) serve one thread only' };
  }
  return { threads: asked, singleBecause: null };
}
