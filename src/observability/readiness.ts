import type { Role } from '../config/schema.js';
import type { Logger } from './logger.js';

/**
 * What `/readyz` answers: whether this node's roles can do their job now.
 * Each dependency the roles need (Postgres, Redis, Kafka, the consumer group)
 * is a named check, run in the background every `intervalMs` and bounded by
 * `timeoutMs`; a probe reads the last results, so it never waits on a dead
 * dependency and a flood of probes costs nothing.
 *
 *   interval ──► every check at once ──► results (ok, latencyMs, error) ──► GET /readyz
 *                 (one probe per check out at a time; a probe with no
 *                  answer within timeoutMs counts as failed and is let go)
 *
 * Besides the checks, two states of the node itself: `startup` (false until
 * every role is up, naming what the start waits for) and draining (set by
 * the graceful shutdown: 503 first, so load balancers stop sending).
 */

/** One check's last result; details a check returns (partitions, …) are shown beside these. */
export interface CheckResult {
  ok: boolean;
  latencyMs?: number;
  error?: string;
  [detail: string]: unknown;
}

/**
 * A dependency probe: resolves when the dependency answers (optionally with
 * details to show), throws an Error whose message says why not. `signal` is
 * aborted when the probe ran out of time (drop a connection that hangs).
 */
export type Check = (signal: AbortSignal) => Promise<Record<string, unknown> | void>;

/** What a check throws to fail with details shown beside its error (a threaded node's `failing` names). */
export class CheckFailed extends Error {
  readonly details: Record<string, unknown>;
  constructor(
    message: string,
    details: Record<string, unknown> = {},
  ) {
    super(message);
    this.details = details;
  }
}

/**
 * What a check throws while the part of the node it watches is still coming
 * up as planned (a threaded node's other threads): /readyz shows the check
 * failing, but the log stays quiet, as it does for the start itself.
 */
export class StillStarting extends CheckFailed {}

export interface ReadinessOptions {
  intervalMs: number;
  timeoutMs: number;
}

export type ReadinessStatus = 'ready' | 'not_ready' | 'draining';

export interface ReadinessReport {
  status: ReadinessStatus;
  roles: readonly Role[];
  /**
   * The checks failing now, by name: this node's own, and (in a threaded node)
   * whatever dependency another thread of the process sees failing, as its
   * `threads` check reports it; so /readyz names Redis, Postgres or Kafka
   * whichever thread answers it.
   */
  failing: string[];
  checks: Record<string, CheckResult>;
}

interface Entry {
  run: Check;
  result: CheckResult;
  /** The round of this check still out (null when none). */
  pending: Promise<void> | null;
  /** The last result failed with StillStarting. */
  starting: boolean;
}

export class Readiness {
  private readonly entries = new Map<string, Entry>();
  private startup: CheckResult = { ok: false, error: 'starting' };
  private draining = false;
  private timer: NodeJS.Timeout | null = null;

  private readonly roles: readonly Role[];
  private readonly options: Readonly<ReadinessOptions>;
  private readonly log: Logger;
  constructor(
    roles: readonly Role[],
    options: Readonly<ReadinessOptions>,
    log: Logger,
  ) {
    this.roles = roles;
    this.options = options;
    this.log = log;
  }

  /** Adds (or replaces) a named check; it runs from the next round on. */
  add(name: string, run: Check): void {
    this.entries.set(name, { run, result: { ok: false, error: 'not checked yet' }, pending: null, starting: false });
  }

  /** The start is waiting: `reason` names the dependency and its error. */
  waiting(reason: string): void {
    this.startup = { ok: false, error: reason };
  }

  /** Every role is up. */
  started(): void {
    this.startup = { ok: true };
  }

  /**
   * Graceful drain, step one: /readyz answers 503 `draining` from now on,
   * whatever the checks say, so load balancers stop sending new work while
   * the node still serves what reaches it. Never undone.
   */
  setDraining(): void {
    this.draining = true;
  }

  get isDraining(): boolean {
    return this.draining;
  }

  /** Runs a round now and then every `intervalMs` until stop(). */
  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.refresh(), this.options.intervalMs);
    this.timer.unref();
    void this.refresh();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** One round of every check; resolves when each answered or timed out. */
  async refresh(): Promise<void> {
    await Promise.all([...this.entries].map(([name, entry]) => this.probe(name, entry)));
  }

  /** Runs one check now (its state changed: a threaded node's `threads`), not waiting for the next round. */
  async recheck(name: string): Promise<void> {
    const entry = this.entries.get(name);
    if (entry) await this.probe(name, entry);
  }

  report(): ReadinessReport {
    const checks: Record<string, CheckResult> = { startup: this.startup };
    let ok = this.startup.ok;
    for (const [name, entry] of this.entries) {
      checks[name] = entry.result;
      ok &&= entry.result.ok;
    }
    const status: ReadinessStatus = this.draining ? 'draining' : ok ? 'ready' : 'not_ready';
    const failing = new Set<string>();
    for (const name in checks) {
      const result = checks[name]!;
      if (result.ok) continue;
      const named = result.failing;
      // `threads` stands for the other threads: the names it carries say what fails there.
      if (name === 'threads' && Array.isArray(named) && named.length > 0) for (const other of named) failing.add(String(other));
      else failing.add(name);
    }
    return { status, roles: this.roles, failing: [...failing], checks };
  }

  private probe(name: string, entry: Entry): Promise<void> {
    // A probe still out (within its timeout) answers for this round too: never pile probes up.
    if (entry.pending) return entry.pending;
    const { timeoutMs } = this.options;
    const abort = new AbortController();
    const began = performance.now();
    const elapsed = () => Math.round(performance.now() - began);
    let starting = false;
    const answer = entry.run(abort.signal).then(
      (details): CheckResult => ({ ...(details ?? {}), ok: true, latencyMs: elapsed() }),
      (err: unknown): CheckResult => {
        starting = err instanceof StillStarting;
        const details = err instanceof CheckFailed ? err.details : undefined;
        return { ...details, ok: false, latencyMs: elapsed(), error: err instanceof Error ? err.message : String(err) };
      },
    );
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<CheckResult>((resolve) => {
      timer = setTimeout(() => {
        abort.abort();
        resolve({ ok: false, latencyMs: timeoutMs, error: `no answer within ${timeoutMs} ms` });
      }, timeoutMs);
    });
    entry.pending = Promise.race([answer, timedOut]).then((result) => {
      clearTimeout(timer);
      entry.pending = null;
      // Replaced meanwhile (add() with the same name): this result is about the old check.
      if (this.entries.get(name) === entry) this.record(name, entry, result, starting);
    });
    return entry.pending;
  }

  /**
   * Keeps the result; logs only changes (a dependency lost or back), not every
   * round. Quiet (debug): failures while the part is still starting and while
   * the node drains (the other threads draining, backends closing).
   */
  private record(name: string, entry: Entry, result: CheckResult, starting: boolean): void {
    const was = entry.result;
    const wasStarting = entry.starting;
    entry.result = result;
    entry.starting = starting;
    // Not a failure before: the first result, or one while the part was still starting.
    const fresh = was.error === 'not checked yet' || wasStarting;
    if (result.ok) {
      if (!was.ok && !fresh) this.log.info({ check: name, latencyMs: result.latencyMs }, 'readiness check passes again');
      return;
    }
    if (starting) {
      if (!wasStarting) this.log.debug({ check: name, error: result.error }, 'readiness check waits for the start');
      return;
    }
    if (!was.ok && !fresh) return; // failing already: said once
    if (this.draining) this.log.debug({ check: name, error: result.error }, 'readiness check fails while draining');
    else this.log.warn({ check: name, error: result.error }, 'readiness check failed');
  }
}
