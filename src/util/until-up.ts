import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../observability/logger.js';
import { backoffDelay, type BackoffOptions } from './backoff.js';

/**
 * How the start waits out a dependency that is not there yet: 200 ms
 * doubling to 2 s (with jitter, so a fleet restarted at once does not knock
 * in step). Low ceiling: once the dependency is back, the node should be up
 * within about two seconds.
 */
export const BRING_UP_BACKOFF: Readonly<BackoffOptions> = { baseMs: 200, maxMs: 2_000, jitter: 0.2 };

/** A dependency refused us for good at start (a refused login, no such database): one line, the cause inside. */
export class DependencyFailedError extends Error {
  override readonly name = 'DependencyFailedError';
}

export interface UntilUpOptions {
  /** True when waiting can help (the dependency is away); false stops the start with the error. */
  retriable(err: unknown): boolean;
  /** One line for the log and /readyz: the cause, no secrets. */
  describe(err: unknown): string;
  /** What to throw for an error waiting cannot fix; by default the error itself. */
  fatal?(err: unknown): Error;
  /** Told what the start waits for each time an attempt fails. */
  onWait(reason: string): void;
  /** Aborted when the node is stopped while it starts. */
  signal: AbortSignal;
  log: Logger;
}

/**
 * Runs `attempt` until it succeeds, backing off while it fails with a
 * retriable error; rethrows anything else (a misconfiguration) at once.
 */
export async function untilUp<T>(dependency: string, attempt: () => Promise<T>, options: UntilUpOptions): Promise<T> {
  const { signal, log } = options;
  for (let failures = 0; ; failures++) {
    signal.throwIfAborted();
    try {
      const value = await attempt();
      if (failures > 0) log.info({ dependency, failures }, `${dependency} answers; starting`);
      return value;
    } catch (err) {
      signal.throwIfAborted();
      if (!options.retriable(err)) throw options.fatal ? options.fatal(err) : err;
      const reason = `waiting for ${dependency}: ${options.describe(err)}`;
      options.onWait(reason);
      // Once loudly, then quietly: /readyz names the cause meanwhile.
      log[failures === 0 ? 'warn' : 'debug']({ dependency, failures: failures + 1 }, reason);
    }
    await sleep(backoffDelay(failures, BRING_UP_BACKOFF), undefined, { signal });
  }
}
