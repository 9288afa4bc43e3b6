import { Worker } from 'node:worker_threads';
import type { Config } from '../../config/schema.js';
import type { Logger } from '../../observability/logger.js';
import type { CheckResult, ReadinessStatus } from '../../observability/readiness.js';
import type { FailingCheck, FromThread, ThreadData, ThreadListen, ToThread } from './thread-messages.js';
import { describeFailing } from './thread-readiness.js';
import type { ThreadSeries } from './thread-metrics.js';
import { ConsumeBarrier } from './consume-barrier.js';

// Under the test runner the sources run as .ts; built, as .js.
const THREAD_ENTRY = new URL(import.meta.url.endsWith('.ts') ? './node-thread.ts' : './node-thread.js', import.meta.url);

/** A thread that failed is started again after this, doubling per failure in a row up to MAX_RESTART_MS. */
const FIRST_RESTART_MS = 500;
const MAX_RESTART_MS = 30_000;
/** A thread up this long has its failure count reset. */
const STABLE_MS = 60_000;
/** How long a scrape waits for a thread's series (a thread that does not answer is left out). */
const METRICS_WAIT_MS = 3_000;

type SlotState = 'starting' | 'listening' | 'up' | 'down';

interface Slot {
  index: number;
  generation: number;
  worker: Worker | null;
  state: SlotState;
  readiness: { status: ReadinessStatus; failing: FailingCheck[] } | null;
  failures: number;
  upAt: number;
  restart: NodeJS.Timeout | null;
  /** Resolves once this thread's first start is settled (up, or failed once). */
  settled: () => void;
}

export interface SupervisorHooks {
  /** The public port the threads listen on too. */
  listen(): ThreadListen;
  /** The whole process's /metrics text, for a thread's GET /metrics. */
  processMetrics(): Promise<string>;
  /** A thread's state or readiness changed (the `threads` check and the broadcast follow at once). */
  changed(): void;
}

/**
 * The main thread's side of a threaded node (docs/threads.md): starts the
 * node threads 1..N-1, each a full node of the given roles, and keeps them
 * running. A thread that fails (an uncaught error: it exits,
 * src/node/threads/node-thread.ts) stops listening with its exit, so the kernel
 * sends new connections to the other threads, and is started again with a backoff; its consumer-group member
 * leaves with it, so Kafka hands its partitions to the other threads, from
 * their last committed offsets (nothing acknowledged is lost: a 202 means the
 * record is in the log, and uncommitted records are delivered again).
 *
 *   main thread ── ToThread ──►  node thread i  (ingress + delivery)
 *               ◄─ FromThread ─  (listening, up, readiness, metrics)
 */
export class ThreadSupervisor {
  private readonly slots: Slot[] = [];
  private stopping: 'drain' | 'stop' | null = null;
  private nextRequest = 1;
  private readonly pendingMetrics = new Map<number, (metrics: unknown[] | null) => void>();
  private readonly barrier: ConsumeBarrier;
  private firstStartSettled = false;

  private readonly config: Readonly<Config>;
  private readonly threads: number;
  private readonly log: Logger;
  private readonly hooks: SupervisorHooks;
  constructor(
    config: Readonly<Config>,
    threads: number,
    log: Logger,
    hooks: SupervisorHooks,
  ) {
    this.config = config;
    this.threads = threads;
    this.log = log;
    this.hooks = hooks;
    const others = Array.from({ length: threads - 1 }, (_, i) => i + 1);
    this.barrier = new ConsumeBarrier(others, (index) => {
      const slot = this.slots.find((s) => s.index === index);
      if (slot) this.send(slot, { type: 'consume' });
    });
  }

  /**
   * Waits until every other thread is ready to join the consumer group (or
   * `waitMs` passed), then lets them join: the main thread joins with them.
   */
  async gatherToConsume(waitMs: number): Promise<void> {
    const missing = await this.barrier.gather(waitMs);
    if (missing.length > 0) this.log.warn({ threads: missing, waitMs }, 'joining the consumer group without these threads (not ready in time): they join when they are');
  }

  /** True until every other thread's first start has settled (up, or failed once). */
  get starting(): boolean {
    return !this.firstStartSettled;
  }

  /** Starts threads 1..N-1; resolves once each is up or has failed its first start (then it is retried). */
  async start(): Promise<void> {
    const settled: Array<Promise<void>> = [];
    for (let index = 1; index < this.threads; index++) {
      settled.push(
        new Promise<void>((resolve) => {
          const slot: Slot = { index, generation: 0, worker: null, state: 'down', readiness: null, failures: 0, upAt: 0, restart: null, settled: resolve };
          this.slots.push(slot);
          this.spawn(slot);
        }),
      );
    }
    await Promise.all(settled);
    this.firstStartSettled = true;
  }

  /** The `threads` readiness check of the main thread: every other thread up and ready. */
  check(): CheckResult {
    const states: Record<string, string> = {};
    // Before start(): the other threads are not even asked for yet.
    const problems: string[] = this.slots.length < this.threads - 1 ? ['the other threads are not started yet'] : [];
    const failing = new Set<string>();
    for (const slot of this.slots) {
      const state = slot.state !== 'up' ? slot.state : (slot.readiness?.status ?? 'not_ready');
      states[String(slot.index)] = state;
      if (state === 'ready') continue;
      const checks = slot.readiness?.failing ?? [];
      for (const check of checks) failing.add(check.name);
      // The dependency and its error first: what an operator reading /readyz acts on.
      problems.push(checks.length > 0 ? describeFailing(checks, `thread ${slot.index}`) : `thread ${slot.index} ${slot.state === 'up' ? 'not reporting yet' : state}`);
    }
    if (problems.length === 0) return { ok: true, threads: this.threads, states };
    return { ok: false, error: problems.join('; '), threads: this.threads, states, failing: [...failing] };
  }

  /** Tells every thread how the whole process is (their `threads` check). */
  broadcast(result: CheckResult): void {
    for (const slot of this.slots) this.send(slot, { type: 'process', result });
  }

  /** Every other thread's series (threads that do not answer in time are left out). */
  async series(): Promise<ThreadSeries[]> {
    const answers = await Promise.all(
      this.slots
        .filter((slot) => slot.state === 'up' && slot.worker)
        .map(
          (slot) =>
            new Promise<ThreadSeries | null>((resolve) => {
              const id = this.nextRequest++;
              const timer = setTimeout(() => finish(null), METRICS_WAIT_MS);
              const finish = (metrics: unknown[] | null) => {
                clearTimeout(timer);
                this.pendingMetrics.delete(id);
                resolve(metrics ? { index: slot.index, metrics } : null);
              };
              this.pendingMetrics.set(id, finish);
              this.send(slot, { type: 'metrics-request', id });
            }),
        ),
    );
    return answers.filter((a): a is ThreadSeries => a !== null);
  }

  /** Graceful: every thread drains as the main thread does (same delay); resolves when they have exited. */
  drain(): Promise<void> {
    return this.end('drain');
  }

  /** At once: every thread stops; resolves when they have exited. */
  stop(): Promise<void> {
    return this.end('stop');
  }

  /**
   * Before the process exits without finishing the drain: every thread exits
   * now. Waits at most `waitMs`.
   */
  async exitNow(waitMs = 2_000): Promise<void> {
    this.stopping = 'stop';
    const exits = this.slots.flatMap((slot) => {
      const worker = slot.worker;
      if (!worker) return [];
      const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
      this.send(slot, { type: 'exit' });
      return [exited];
    });
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.all(exits), new Promise<void>((resolve) => (timer = setTimeout(resolve, waitMs)))]);
    clearTimeout(timer);
  }

  /** Test hook: thread `index` fails as a bug would. */
  crash(index: number): void {
    const slot = this.slots.find((s) => s.index === index);
    if (slot) this.send(slot, { type: 'crash' });
  }

  private async end(how: 'drain' | 'stop'): Promise<void> {
    // A drain already under way is not turned into a stop (the main thread's release awaits it).
    this.stopping ??= how;
    const exits: Array<Promise<void>> = [];
    for (const slot of this.slots) {
      if (slot.restart) clearTimeout(slot.restart);
      slot.restart = null;
      const worker = slot.worker;
      if (!worker) continue;
      exits.push(new Promise<void>((resolve) => worker.once('exit', () => resolve())));
      this.send(slot, { type: this.stopping });
    }
    await Promise.all(exits);
  }

  private send(slot: Slot, message: ToThread): void {
    slot.worker?.postMessage(message);
  }

  private spawn(slot: Slot): void {
    slot.generation++;
    slot.state = 'starting';
    slot.readiness = null;
    const data: ThreadData = { index: slot.index, config: this.config as Config, listen: this.hooks.listen() };
    const worker = new Worker(THREAD_ENTRY, { workerData: data });
    slot.worker = worker;
    worker.on('message', (message: FromThread) => this.receive(slot, message));
    worker.on('error', (err) => this.log.error({ err, thread: slot.index }, 'node thread failed'));
    worker.once('exit', (code) => this.exited(slot, worker, code));
  }

  private receive(slot: Slot, message: FromThread): void {
    switch (message.type) {
      case 'listening':
        slot.state = 'listening';
        break;
      case 'consume-ready':
        this.barrier.arrive(slot.index);
        break;
      case 'up':
        slot.state = 'up';
        slot.upAt = Date.now();
        slot.settled();
        this.hooks.changed();
        break;
      case 'failed':
        this.log.error({ thread: slot.index, error: message.message }, 'node thread could not start');
        this.barrier.excuse(slot.index);
        break;
      case 'readiness': {
        const was = slot.readiness?.status;
        slot.readiness = { status: message.status, failing: message.failing };
        if (was !== message.status) this.hooks.changed();
        break;
      }
      case 'metrics-json':
        this.pendingMetrics.get(message.id)?.(message.metrics);
        break;
      case 'metrics-ask':
        this.hooks.processMetrics().then(
          (text) => this.send(slot, { type: 'metrics-answer', id: message.id, text }),
          () => this.send(slot, { type: 'metrics-answer', id: message.id, text: null }),
        );
        break;
    }
  }

  private exited(slot: Slot, worker: Worker, code: number): void {
    if (slot.worker !== worker) return;
    slot.worker = null;
    slot.state = 'down';
    slot.readiness = null;
    slot.settled();
    this.barrier.excuse(slot.index);
    this.hooks.changed();
    if (this.stopping) return;
    if (slot.upAt > 0 && Date.now() - slot.upAt > STABLE_MS) slot.failures = 0;
    const delay = Math.min(MAX_RESTART_MS, FIRST_RESTART_MS * 2 ** slot.failures);
    slot.failures++;
    slot.upAt = 0;
    this.log.error({ thread: slot.index, code, restartInMs: delay }, 'node thread exited; starting it again (its partitions go to the other threads meanwhile)');
    slot.restart = setTimeout(() => {
      slot.restart = null;
      if (!this.stopping) this.spawn(slot);
    }, delay);
  }
}
