import type { Config } from '../../config/schema.js';
import type { CheckResult, ReadinessStatus } from '../../observability/readiness.js';

/** The shared HTTP port a node thread listens on too (SO_REUSEPORT: the kernel spreads the connections). */
export interface ThreadListen {
  host: string;
  port: number;
}

/** What a node thread starts with (its workerData). */
export interface ThreadData {
  index: number;
  config: Config;
  listen: ThreadListen;
}

/** From the main thread to a node thread. */
export type ToThread =
  | { type: 'drain' }
  | { type: 'stop' }
  /** The process is exiting now (shutdown timeout, second signal): exit at once. */
  | { type: 'exit' }
  /** The whole process's readiness, for the thread's `threads` check. */
  | { type: 'process'; result: CheckResult }
  | { type: 'metrics-request'; id: number }
  | { type: 'metrics-answer'; id: number; text: string | null }
  /** Test hook: the thread fails as a bug would (an uncaught exception). */
  | { type: 'crash' }
  /** The thread's delivery role may join the consumer group now (src/node/threads/consume-barrier.ts). */
  | { type: 'consume' };

/** A check failing on a thread: its name (redis, postgres, kafka, …) and why. */
export interface FailingCheck {
  name: string;
  error: string;
}

/** From a node thread to the main thread. */
export type FromThread =
  | { type: 'listening' }
  /** Every role but delivery is up: the thread waits for `consume` to join the consumer group. */
  | { type: 'consume-ready' }
  | { type: 'up' }
  | { type: 'failed'; message: string }
  /** The thread's own readiness (its `threads` check left out). */
  | { type: 'readiness'; status: ReadinessStatus; failing: FailingCheck[] }
  | { type: 'metrics-json'; id: number; metrics: unknown[] }
  /** The thread's GET /metrics asks for the whole process's text. */
  | { type: 'metrics-ask'; id: number };
