/**
 * One target's adaptive concurrency limit (docs/flow-control.md): AIMD with a
 * slow start, a Retry-After pause and an optional request rate. Pure state and
 * arithmetic on a clock the caller passes in: no timers, no promises (the
 * waiting and waking is TargetFlows' business).
 *
 *   limit
 *     ▲          slow start: +1 per answer        additive: +1 per limit answers (≈ +1 per round trip)
 *     │                ╱‾‾‾‾‾╲ ×0.5 on timeout/429/503     ╱‾‾‾‾‾
 *     │   initial ___╱        ╲_____________________╱
 *     └──────────────────────────────────────────────────────────► time
 *
 * Growth needs the limit to be in use (at least half of it in flight when the
 * answer came) and the answer to be fast (within half its deadline): an idle
 * or already slow receiver does not earn more requests. A decrease happens at
 * most once per window: answers to requests started before the last decrease
 * describe the load that decrease already reacted to (as TCP halves its
 * window once per loss episode), so a burst of timeouts halves once, not to 1.
 */

/** What a target allows at most: its own settings or delivery.flow's defaults. */
export interface FlowCeilings {
  maxConcurrency: number;
  /** Requests started per second at most; 0 or null: no rate limit. */
  maxRatePerSecond: number | null;
}

/** How an answer moves the limit. */
export type FlowSignal = 'grow' | 'overload' | 'neutral';

/** The multiplicative decrease: TCP's 0.5 reacts in one step to a receiver that is clearly over its capacity. */
const DECREASE = 0.5;
/** A rate limit lets this many seconds' worth of requests start back to back (at least one). */
const BURST_SECONDS = 0.1;

export class FlowLimit {
  /** The limit as a real number: additive growth adds fractions. */
  private value: number;
  /** Past this the limit grows additively rather than by one per answer. */
  private threshold = Infinity;
  /** Counts decreases: a request remembers the epoch it started in. */
  private epoch = 0;
  inFlight = 0;
  /** No request starts before this (clock ms): a Retry-After. */
  pausedUntil = 0;
  private tokens = 0;
  private tokensAt = -1;

  constructor(initial: number) {
    this.value = Math.max(1, initial);
  }

  /** The concurrency limit now, under `ceiling`. */
  limit(ceiling: number): number {
    return Math.max(1, Math.min(ceiling, Math.floor(this.value)));
  }

  /**
   * 0 when a request may start now; else the clock ms when it may next be
   * worth asking (a pause or rate-limit end), or Infinity when only a
   * finishing request can make room.
   */
  blockedUntil(now: number, c: FlowCeilings): number {
    if (now < this.pausedUntil) return this.pausedUntil;
    if (this.inFlight >= this.limit(c.maxConcurrency)) return Infinity;
    const rate = c.maxRatePerSecond;
    if (rate) {
      this.refill(now, rate);
      if (this.tokens < 1) return now + Math.ceil(((1 - this.tokens) * 1000) / rate);
    }
    return 0;
  }

  /** Starts a request (after blockedUntil said 0); returns its ticket for `finish`. */
  start(c: FlowCeilings): number {
    this.inFlight++;
    if (c.maxRatePerSecond) this.tokens--;
    return this.epoch;
  }

  /**
   * A request ended. `retryAfterMs` (with an overload) pauses new starts for
   * that long, at most `maxPauseMs`.
   */
  finish(ticket: number, signal: FlowSignal, now: number, c: FlowCeilings, retryAfterMs: number | null = null, maxPauseMs = 0): void {
    const inUse = this.inFlight;
    this.inFlight--;
    const ceiling = c.maxConcurrency;
    // A ceiling lowered since (a target saved with a smaller maxConcurrency) takes effect at once.
    if (this.value > ceiling) this.value = ceiling;
    if (signal === 'overload') {
      if (retryAfterMs !== null && retryAfterMs > 0) this.pausedUntil = Math.max(this.pausedUntil, now + Math.min(retryAfterMs, maxPauseMs));
      if (ticket !== this.epoch) return;
      this.epoch++;
      this.value = Math.max(1, Math.floor(this.value * DECREASE));
      this.threshold = this.value;
      return;
    }
    if (signal !== 'grow' || this.value >= ceiling) return;
    // An idle limit proves nothing about the receiver: grow only one that is in use.
    if (inUse * 2 < this.limit(ceiling)) return;
    this.value = Math.min(ceiling, this.value < this.threshold ? this.value + 1 : this.value + 1 / this.value);
  }

  private refill(now: number, rate: number): void {
    const burst = Math.max(1, rate * BURST_SECONDS);
    if (this.tokensAt < 0) this.tokens = burst;
    else this.tokens = Math.min(burst, this.tokens + ((now - this.tokensAt) * rate) / 1000);
    this.tokensAt = now;
  }
}
