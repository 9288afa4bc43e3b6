import { Piscina } from 'piscina';
import { runCheck, type CheckJob, type CheckVerdict } from './crypto-checks.js';

/**
 * Where ingress runs its key-hash and HMAC checks (config `ingress.validation`):
 *
 *   inline  on the event loop, synchronously: no hand-off at all.
 *   pool    in piscina worker threads, batched:
 *
 *     request ─┐                     ┌─ one pool task = every check collected
 *     request ─┼─► pending[] ──flush─┤   since the last flush, run in a thread
 *     request ─┘   (setImmediate,    └─► verdicts resolve each request's promise
 *                   or maxBatch)
 *
 * A flush waits for the end of the event-loop turn (setImmediate), so all the
 * requests read in one turn (from every connection) share one message to a thread; while every
 * thread is busy the batch keeps growing (up to maxBatch), so under load the
 * per-task cost of the pool (post, wake, structured clone, resolve) is paid
 * once per batch, not once per request.
 */
export interface Validator {
  /** A verdict now (inline) or later (pool); callers must handle both without awaiting a plain value. */
  check(job: CheckJob): CheckVerdict | Promise<CheckVerdict>;
  close(): Promise<void>;
}

export class InlineValidator implements Validator {
  check(job: CheckJob): CheckVerdict {
    return runCheck(job);
  }

  async close(): Promise<void> {}
}

interface Waiting {
  job: CheckJob;
  resolve: (verdict: CheckVerdict) => void;
  reject: (err: Error) => void;
}

// tsc emits the worker beside this file; under a TypeScript loader (tests) the
// source file is used, and worker threads inherit the loader through execArgv.
const WORKER = new URL(import.meta.url.endsWith('.ts') ? './validation-worker.ts' : './validation-worker.js', import.meta.url);

export class PoolValidator implements Validator {
  private readonly pool: Piscina<CheckJob[], CheckVerdict[]>;
  private pending: Waiting[] = [];
  private scheduled = false;
  private inFlight = 0;

  private readonly threads: number;
  private readonly maxBatch: number;
  constructor(
    threads: number,
    maxBatch: number,
  ) {
    this.threads = threads;
    this.maxBatch = maxBatch;
    this.pool = new Piscina({
      filename: WORKER.href,
      minThreads: threads,
      maxThreads: threads,
      // Threads live as long as the process: starting one costs milliseconds.
      idleTimeout: Number.MAX_SAFE_INTEGER,
    });
  }

  check(job: CheckJob): Promise<CheckVerdict> {
    return new Promise<CheckVerdict>((resolve, reject) => {
      this.pending.push({ job, resolve, reject });
      if (this.pending.length >= this.maxBatch) this.flush();
      else if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(this.onTurnEnd);
      }
    });
  }

  private readonly onTurnEnd = (): void => {
    this.scheduled = false;
    // Every thread busy: keep collecting; the next completion flushes.
    if (this.inFlight < this.threads) this.flush();
  };

  private flush(): void {
    if (this.pending.length === 0) return;
    const batch = this.pending;
    this.pending = [];
    this.inFlight++;
    this.pool.run(batch.map((w) => w.job)).then(
      (verdicts) => {
        for (let i = 0; i < batch.length; i++) batch[i]!.resolve(verdicts[i]!);
      },
      (err: unknown) => {
        const error = err instanceof Error ? err : new Error(String(err));
        for (const w of batch) w.reject(error);
      },
    ).finally(() => {
      this.inFlight--;
      if (this.pending.length > 0 && !this.scheduled) this.flush();
    });
  }

  async close(): Promise<void> {
    while (this.pending.length > 0) this.flush();
    await this.pool.close();
  }
}

export type ValidationMode = 'inline' | 'pool';

export function createValidator(mode: ValidationMode, threads: number, maxBatch: number): Validator {
  return mode === 'pool' ? new PoolValidator(threads, maxBatch) : new InlineValidator();
}
