import type { Config } from '../../config/schema.js';
import { listenPublic } from '../../http/listen.js';
import { listenNode, type ListeningNode, type NodeOptions, type RunningNode } from '../node.js';
import type { Logger } from '../../observability/logger.js';
import { CheckFailed, StillStarting, type CheckResult } from '../../observability/readiness.js';
import type { ThreadListen } from './thread-messages.js';
import { MainThreadMetrics } from './thread-metrics.js';
import { ThreadSupervisor } from './thread-supervisor.js';
import { describeFailing, failingChecks } from './thread-readiness.js';

/**
 * How long the threads' delivery roles wait for each other before joining the
 * consumer group anyway. A thread starts in about a second on a quiet machine,
 * but loading the whole module graph in three fresh threads on two busy cores
 * took over 30 s in a CI run (and the late joiners' rebalance sent 135 events
 * twice); a thread stuck longer than this holds every thread's first
 * deliveries back, once, at start.
 */
const GATHER_WAIT_MS = 60_000;

/** A threaded node: one node per thread behind one port (docs/threads.md). */
export interface ThreadedNode extends ListeningNode {
  threads: number;
  /** Ends the other threads at once, before the process exits without finishing the drain. */
  exitThreads(): Promise<void>;
  /** Test hook: thread `index` (1..threads-1) fails as a bug would; it is started again. */
  __crashThread(index: number): void;
}

/**
 * Starts a node on `threads` JavaScript threads of this process:
 *
 *   client ─► port (SO_REUSEPORT) ─┬─► thread 0, the main thread: every role; migrations, first run
 *                                  ├─► thread 1: every role
 *                                  └─► …
 *
 * Every thread listens on the public port and serves the connections the
 * kernel gives it, start to end, on its own event loop (no relay thread);
 * a thread listens once its roles are up, so none is handed a connection it
 * would answer 503 `unavailable`.
 *
 * The main thread's node comes up first (migrations, topic, first-run keys),
 * then threads 1..N-1 start (src/node/threads/thread-supervisor.ts). Each is a
 * consumer-group member of its own, so Kafka spreads the partitions over the
 * threads and moves them when a thread comes or goes; at start they join the
 * group together (consume-barrier.ts); caches that must agree
 * are Redis-backed with the invalidation bus, which reaches every thread as
 * it reaches every process. /readyz on any thread answers for the process
 * (check `threads`); /metrics on any thread sums every thread's series.
 */
export async function listenThreadedNode(config: Readonly<Config>, threads: number, log: Logger, options: NodeOptions = {}): Promise<ThreadedNode> {
  let port = 0;
  // Every thread runs every configured role: the port is shared, so a management
  // request may reach any thread (its routes are stateless over Postgres and Redis);
  // what happens once per process (migrations, first-run keys, the metrics port) is the main thread's.
  const supervisor: ThreadSupervisor = new ThreadSupervisor(config, threads, log, {
    listen: (): ThreadListen => ({ host: config.server.host, port }),
    processMetrics: () => metrics.metrics(),
    changed: () => publish(),
  });
  const metrics = new MainThreadMetrics(() => supervisor.series());
  // The other threads start once this one has done what happens once per process (migrations,
  // topic, first-run keys): at its delivery role's start, so that every thread joins the
  // consumer group together, or, without delivery, once its roles are up.
  let threadsStarted: Promise<void> | null = null;
  const startThreads = () => (threadsStarted ??= supervisor.start());
  const node = await listenNode(config, log, {
    ...options,
    listen: async (router, server) => {
      const listener = await listenPublic(router, server, true);
      // Known before the roles start: the other threads (started from beforeConsuming) listen on it too.
      port = listener.port;
      return listener;
    },
    processMetrics: metrics,
    // The other threads finish their in-flight work before this one's backends close.
    beforeRelease: () => supervisor.stop(),
    beforeConsuming: async () => {
      void startThreads();
      await supervisor.gatherToConsume(GATHER_WAIT_MS);
    },
  });

  const ownState = (): CheckResult => {
    const report = node.readiness.report();
    const failing = failingChecks(report.checks);
    if (failing.length === 0 && report.status !== 'draining') return { ok: true };
    return { ok: false, error: failing.length > 0 ? describeFailing(failing, 'thread 0') : 'thread 0 draining', failing: failing.map((f) => f.name) };
  };
  node.readiness.add('threads', async () => {
    const result = supervisor.check();
    // The other threads coming up for the first time is the start, not a failure to warn about.
    if (!result.ok) {
      const error = result.error ?? 'another thread is not ready';
      const details = Array.isArray(result.failing) ? { failing: result.failing } : {};
      throw supervisor.starting ? new StillStarting(error, details) : new CheckFailed(error, details);
    }
    const { ok: _ok, ...details } = result;
    return details;
  });
  // What the other threads' `threads` check shows: this thread's own state and every other's.
  let published = '';
  const publish = () => {
    const own = ownState();
    const others = supervisor.check();
    const { ok: _ok, error: _error, failing: othersFailing, ...details } = others;
    const errors = [own.error, others.error].filter(Boolean);
    // Every dependency any thread sees failing, named in every thread's /readyz (whichever thread answers it).
    const failing = [...new Set([...((own.failing as string[] | undefined) ?? []), ...((othersFailing as string[] | undefined) ?? [])])];
    const result: CheckResult = errors.length === 0 ? { ok: true, ...details } : { ok: false, error: errors.join('; '), ...details, failing };
    // The other threads' checks stay quiet while the process is still starting (see StillStarting).
    if (!result.ok && supervisor.starting) result.starting = true;
    // Sent every time (a thread started meanwhile has not heard it yet); rechecked here on a change.
    supervisor.broadcast(result);
    const text = JSON.stringify(result);
    if (text === published) return;
    published = text;
    // A thread came, went or changed: this thread's /readyz says so now, not at the next round.
    void node.readiness.recheck('threads');
  };
  const broadcaster = setInterval(publish, Math.max(100, Math.floor(config.health.intervalMs / 2)));
  broadcaster.unref();

  let ending: Promise<void> | null = null;
  const end = (how: 'drain' | 'stop') => {
    clearInterval(broadcaster);
    // All threads begin at once (one drain delay, not one per thread); the main thread's release awaits theirs.
    void (how === 'drain' ? supervisor.drain() : supervisor.stop());
    return (ending ??= how === 'drain' ? node.drain() : node.stop());
  };
  const stop = () => end('stop');
  const drain = () => end('drain');
  const up = node.up.then(async (running): Promise<RunningNode> => {
    await startThreads();
    log.info({ threads }, 'every node thread started');
    return { ...running, stop, drain };
  });
  return { ...node, threads, up, stop, drain, exitThreads: () => supervisor.exitNow(), __crashThread: (index) => supervisor.crash(index) };
}
