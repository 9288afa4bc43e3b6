/**
 * Exponential backoff with optional jitter, for every loop that waits out a
 * failing dependency (database, cache, broker) and for the jitter of the
 * delivery retry schedule (docs/delivery.md#delivery-engine). One formula, so a change to how we
 * back off is made once.
 *
 *   delay(n) = min(maxMs, baseMs · 2ⁿ), then moved by up to ±jitter of itself
 *
 *   baseMs 250, maxMs 5000:  250, 500, 1000, 2000, 4000, 5000, 5000, …
 */

export interface BackoffOptions {
  /** The delay for n = 0, in ms. */
  baseMs: number;
  /** The ceiling in ms: the delay stops doubling here. */
  maxMs: number;
  /** The fraction drawn at random either side of the delay (0.2: ±20 %); absent or 0: none. */
  jitter?: number;
}

/**
 * The delay before a retry, where `n` is how often it has doubled (callers
 * pass their count of failures so far). Jitter, when asked for, applies after
 * the ceiling, so many callers that all reached it still spread out.
 */
export function backoffDelay(n: number, options: Readonly<BackoffOptions>, random: () => number = Math.random): number {
  // Past 2^52 the product is the ceiling anyway; capping n keeps 0 · 2^n from becoming NaN.
  const delay = Math.min(options.maxMs, options.baseMs * 2 ** Math.min(Math.max(n, 0), 52));
  return options.jitter ? jittered(delay, options.jitter, random) : delay;
}

/** `ms` moved by a random amount of up to ±`fraction` of itself, uniformly. */
export function jittered(ms: number, fraction: number, random: () => number = Math.random): number {
  return ms * (1 - fraction + 2 * fraction * random());
}
