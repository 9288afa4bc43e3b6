import type { Logger } from '../observability/logger.js';

/**
 * The steps of a graceful shutdown, as the node provides them. Kept apart
 * from the sequence so readiness (and whatever else learns of the drain) can
 * be rewired without touching the order below.
 */
export interface DrainSteps {
  /** Readiness answers 503 "draining" from now on. */
  markDraining(): void;
  /** Closes the listening socket; answers from now on close their connection. */
  stopAccepting(): void;
  /** Lets the roles finish in-flight work until `deadline` (epoch ms): appends answered, lanes finished or parked, offsets committed. */
  finish(deadline: number): Promise<void>;
  /** Closes what is left (pools, clients, remaining connections). */
  release(): Promise<void>;
}

export interface DrainTimings {
  /** How long the node keeps serving while reporting not-ready (server.drainDelayMs). */
  delayMs: number;
  /** The whole shutdown's budget (server.shutdownTimeoutMs); the caller forces exit past it. */
  shutdownTimeoutMs: number;
}

/** Room kept, at the end of the budget, for closing pools and clients after the roles. */
const RELEASE_MARGIN_MS = 1_000;

/**
 * Drains a node:
 *
 *   SIGTERM ─► not ready (503 "draining") ─► serve on for delayMs (the load
 *   balancer sees not-ready and stops sending) ─► close the listener (kept-alive
 *   connections get `connection: close` on their answers) ─► roles finish
 *   in-flight work ─► release ─► exit
 *
 * The roles get the budget left after the delay, minus a margin for release;
 * the caller enforces the budget as a whole (a forced exit).
 */
export async function drainNode(steps: DrainSteps, timings: DrainTimings, log: Logger): Promise<void> {
  const startedAt = Date.now();
  steps.markDraining();
  if (timings.delayMs > 0) {
    log.info({ delayMs: timings.delayMs }, 'draining: reporting not ready, still serving');
    await new Promise((resolve) => setTimeout(resolve, timings.delayMs));
  }
  steps.stopAccepting();
  log.info('draining: listener closed, finishing in-flight work');
  const deadline = Math.max(Date.now(), startedAt + timings.shutdownTimeoutMs - RELEASE_MARGIN_MS);
  try {
    await steps.finish(deadline);
  } finally {
    await steps.release();
  }
}
