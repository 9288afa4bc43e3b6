import type { RouteTarget } from '../../routing/route-table.js';
import { FlowLimit, type FlowCeilings, type FlowSignal } from './flow-limit.js';
import type { DispatchResult } from '../http/http-dispatcher.js';
import { parseRetryAfter } from '../outcome.js';

/** delivery.flow: what targets without settings of their own get, and how limits start and pause. */
export interface FlowDefaults {
  maxConcurrency: number;
  /** 0: no rate limit. */
  maxRatePerSecond: number;
  initialConcurrency: number;
  /** The longest a Retry-After pauses a target. */
  maxPauseMs: number;
}

/** Held by one attempt from before it is signed until its answer is in. */
export interface FlowPermit {
  readonly flow: Flow;
  readonly ticket: number;
}

/** What `acquire` rejects with when its signal aborts first: the attempt gave its place up and nothing was sent. */
export class PermitWithdrawn extends Error {
  constructor() {
    super('the wait for a flow permit was withdrawn');
    this.name = 'PermitWithdrawn';
  }
}

/** One attempt waiting for a permit; `withdrawn` ones stay in the queue until they reach its head (no search per withdrawal). */
interface Waiter {
  wake(permit: FlowPermit): void;
  withdrawn: boolean;
}

/** Flows idle this long are forgotten (their learned limit with them); looked for at most once a minute. */
const FORGET_IDLE_MS = 10 * 60_000;
const SWEEP_MS = 60_000;

/** A FIFO of waiting attempts: an array read from a moving head, compacted now and then (no shift() per grant). */
class Waiters {
  private items: Waiter[] = [];
  private head = 0;

  get size(): number {
    return this.items.length - this.head;
  }

  push(waiter: Waiter): void {
    this.items.push(waiter);
  }

  peek(): Waiter {
    return this.items[this.head]!;
  }

  shift(): Waiter {
    const wake = this.items[this.head]!;
    this.items[this.head++] = undefined as never;
    if (this.head === this.items.length) {
      this.items = [];
      this.head = 0;
    } else if (this.head >= 1024 && this.head * 2 >= this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return wake;
  }
}

/** One target's flow: its limit, the attempts waiting for it, one timer for a pause or rate-limit end. */
class Flow {
  readonly limit: FlowLimit;
  readonly waiting = new Waiters();
  /** Entries of `waiting` withdrawn and not yet dropped. */
  withdrawn = 0;
  ceilings: FlowCeilings;
  origin: string;
  timer: NodeJS.Timeout | null = null;
  timerAt = Infinity;
  usedAt: number;

  constructor(initial: number, ceilings: FlowCeilings, origin: string, now: number) {
    this.limit = new FlowLimit(Math.min(initial, ceilings.maxConcurrency));
    this.ceilings = ceilings;
    this.origin = origin;
    this.usedAt = now;
  }
}

/**
 * Flow control per target (docs/flow-control.md): before an attempt is signed
 * and sent it takes a permit from its target's flow, and hands the answer back
 * with it. A target's flow lets at most its adaptive limit of requests run at
 * once (never more than the target's maxConcurrency), starts at most
 * maxRatePerSecond of them, and none while a Retry-After pause lasts.
 *
 * Each target waits in a queue of its own, so a slow or paused target holds
 * back only its own lanes. A waiting lane costs one entry in that queue (its
 * later events wait in the lane's array, as before); a flow keeps one timer at
 * most, for the end of a pause or the next rate-limit token.
 *
 * Targets sharing an origin each have their own flow: two tenants delivering
 * to one SaaS host are limited by that host per account, and one tenant's 429
 * must not pause the other. The connection pools see at most the sum of the
 * targets' limits per origin (and never more than delivery.maxSocketsPerOrigin).
 */
export class TargetFlows {
  private readonly flows = new Map<string, Flow>();
  private sweptAt: number;

  private readonly defaults: Readonly<FlowDefaults>;
  private readonly now: () => number;
  constructor(
    defaults: Readonly<FlowDefaults>,
    now: () => number = () => performance.now(),
  ) {
    this.defaults = defaults;
    this.now = now;
    this.sweptAt = now();
  }

  /** A permit now, or null when the target is at its limit, paused or out of rate (the common case costs no promise). */
  tryAcquire(target: RouteTarget): FlowPermit | null {
    const now = this.now();
    const flow = this.flowOf(target, now);
    flow.usedAt = now;
    if (flow.waiting.size > flow.withdrawn) return null; // first come, first served
    const blocked = flow.limit.blockedUntil(now, flow.ceilings);
    if (blocked === 0) return { flow, ticket: flow.limit.start(flow.ceilings) };
    this.arm(flow, blocked, now);
    return null;
  }

  /**
   * Waits in the target's queue for a permit. When `withdraw` aborts first the
   * wait ends with PermitWithdrawn and the place is given up (a lane spilling
   * to parking, src/delivery/lane.ts); once granted, aborting changes nothing.
   */
  acquire(target: RouteTarget, withdraw?: AbortSignal): Promise<FlowPermit> {
    const now = this.now();
    const flow = this.flowOf(target, now);
    const blocked = flow.limit.blockedUntil(now, flow.ceilings);
    if (flow.waiting.size === flow.withdrawn && blocked === 0) return Promise.resolve({ flow, ticket: flow.limit.start(flow.ceilings) });
    if (withdraw?.aborted) return Promise.reject(new PermitWithdrawn());
    return new Promise<FlowPermit>((resolve, reject) => {
      if (withdraw === undefined) flow.waiting.push({ wake: resolve, withdrawn: false });
      else {
        const onAbort = (): void => {
          waiter.withdrawn = true;
          flow.withdrawn++;
          reject(new PermitWithdrawn());
        };
        const waiter: Waiter = {
          withdrawn: false,
          wake(permit) {
            withdraw.removeEventListener('abort', onAbort);
            resolve(permit);
          },
        };
        withdraw.addEventListener('abort', onAbort, { once: true });
        flow.waiting.push(waiter);
      }
      if (blocked !== 0) this.arm(flow, blocked, now);
    });
  }

  /** The target has attempts waiting for a permit: it is at its limit, paused or out of rate, and more want to start. */
  saturated(targetId: string): boolean {
    const flow = this.flows.get(targetId);
    return flow !== undefined && flow.waiting.size > flow.withdrawn;
  }

  /**
   * The attempt is over: `result` moves the limit (null: it ended without an
   * answer of the receiver's, e.g. a signing failure) and the next waiting
   * attempts of the target start if they may.
   */
  release(permit: FlowPermit, result: DispatchResult | null, timeoutMs: number): void {
    const { flow } = permit;
    const now = this.now();
    let signal: FlowSignal = 'neutral';
    let retryAfterMs: number | null = null;
    if (result !== null) {
      if (result.kind === 'error') {
        if (result.code === 'ETIMEDOUT') signal = 'overload';
      } else if (result.status === 429 || result.status === 503) {
        signal = 'overload';
        retryAfterMs = parseRetryAfter(result.headers['retry-after']);
      } else if (result.status < 500 && result.durationMs * 2 <= timeoutMs) {
        // Answered, and well within its deadline: room for more.
        signal = 'grow';
      }
    }
    flow.limit.finish(permit.ticket, signal, now, flow.ceilings, retryAfterMs, this.defaults.maxPauseMs);
    flow.usedAt = now;
    this.pump(flow, now);
  }

  /** The current limit per origin (the targets of one origin added up), for the metrics gauge. */
  limitsByOrigin(): Array<[origin: string, limit: number]> {
    const sums = new Map<string, number>();
    for (const flow of this.flows.values()) sums.set(flow.origin, (sums.get(flow.origin) ?? 0) + flow.limit.limit(flow.ceilings.maxConcurrency));
    return [...sums];
  }

  /** The current limit of one target (null before its first attempt), for tests and inspection. */
  limitOf(targetId: string): number | null {
    const flow = this.flows.get(targetId);
    return flow ? flow.limit.limit(flow.ceilings.maxConcurrency) : null;
  }

  close(): void {
    for (const flow of this.flows.values()) if (flow.timer) clearTimeout(flow.timer);
    this.flows.clear();
  }

  private flowOf(target: RouteTarget, now: number): Flow {
    if (now - this.sweptAt >= SWEEP_MS) this.sweep(now);
    const s = target.settings;
    const maxConcurrency = s.maxConcurrency ?? this.defaults.maxConcurrency;
    const maxRatePerSecond = s.maxRatePerSecond ?? (this.defaults.maxRatePerSecond || null);
    let flow = this.flows.get(target.id);
    if (!flow) {
      flow = new Flow(this.defaults.initialConcurrency, { maxConcurrency, maxRatePerSecond }, target.url.origin, now);
      this.flows.set(target.id, flow);
    } else {
      // Settings saved since take effect on the next attempt (compared first: this runs per attempt).
      if (flow.ceilings.maxConcurrency !== maxConcurrency || flow.ceilings.maxRatePerSecond !== maxRatePerSecond) flow.ceilings = { maxConcurrency, maxRatePerSecond };
      if (flow.origin !== target.url.origin) flow.origin = target.url.origin;
    }
    return flow;
  }

  /** Starts what may start, oldest first; otherwise arms the flow's timer for when something may. */
  private pump(flow: Flow, now: number): void {
    while (flow.waiting.size > 0) {
      if (flow.waiting.peek().withdrawn) {
        flow.waiting.shift();
        flow.withdrawn--;
        continue;
      }
      const blocked = flow.limit.blockedUntil(now, flow.ceilings);
      if (blocked !== 0) {
        this.arm(flow, blocked, now);
        return;
      }
      flow.waiting.shift().wake({ flow, ticket: flow.limit.start(flow.ceilings) });
    }
  }

  /** One timer per flow, for the earliest time it may start again (Infinity: a release will pump it). */
  private arm(flow: Flow, at: number, now: number): void {
    if (at === Infinity || at >= flow.timerAt) return;
    if (flow.timer) clearTimeout(flow.timer);
    flow.timerAt = at;
    // Not unref'd: attempts wait on it (close() clears it at shutdown).
    flow.timer = setTimeout(() => {
      flow.timer = null;
      flow.timerAt = Infinity;
      this.pump(flow, this.now());
    }, Math.max(1, Math.ceil(at - now)));
  }

  private sweep(now: number): void {
    this.sweptAt = now;
    for (const [id, flow] of this.flows) {
      if (flow.limit.inFlight === 0 && flow.waiting.size === flow.withdrawn && flow.timer === null && now - flow.usedAt >= FORGET_IDLE_MS && now >= flow.limit.pausedUntil) {
        this.flows.delete(id);
      }
    }
  }
}
