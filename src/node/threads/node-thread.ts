import { parentPort, workerData } from 'node:worker_threads';
import { listenPublic, type PublicListener } from '../../http/listen.js';
import type { Router } from '../../http/router.js';
import { listenNode, type ListeningNode } from '../node.js';
import { createLogger } from '../../observability/logger.js';
import { CheckFailed, StillStarting, type CheckResult } from '../../observability/readiness.js';
import type { FromThread, ThreadData, ToThread } from './thread-messages.js';
import { failingChecks } from './thread-readiness.js';
import { NodeThreadMetrics } from './thread-metrics.js';

/**
 * A node thread of a threaded node (src/node/threads/thread-supervisor.ts): a
 * whole node of the process's configuration, on the
 * process's HTTP port (listenThread), its own backends' connections, caches
 * and consumer-group member.
 *
 * The thread listens on the port once its roles are up (until then the
 * other threads serve), and stops listening when it drains or exits.
 */
const data = workerData as ThreadData;
const port = parentPort!;
const log = createLogger(data.config.log.level).child({ thread: data.index });
let node: ListeningNode | null = null;

const post = (message: FromThread) => port.postMessage(message);
const exit = (code: number) => process.exit(code);
const fail = (err: unknown) => {
  log.fatal({ err }, 'node thread failed: exiting (the main thread starts it again)');
  exit(1);
};
process.on('uncaughtException', fail);
process.on('unhandledRejection', fail);

// The main thread lets every thread's delivery role join the consumer group at once (consume-barrier.ts).
let mayConsume: () => void = () => {};
const consuming = new Promise<void>((resolve) => (mayConsume = resolve));

// `starting`: the main thread sets it while the process is still starting (threaded-node.ts).
let processState: CheckResult = { ok: false, error: 'waiting for the main thread', starting: true };
let nextAsk = 1;
const asks = new Map<number, (text: string | null) => void>();
const metrics = new NodeThreadMetrics(
  () =>
    new Promise((resolve) => {
      const id = nextAsk++;
      const timer = setTimeout(() => finish(null), 5_000);
      const finish = (text: string | null) => {
        clearTimeout(timer);
        asks.delete(id);
        resolve(text);
      };
      asks.set(id, finish);
      post({ type: 'metrics-ask', id });
    }),
);

port.on('message', (message: ToThread) => {
  switch (message.type) {
    case 'drain':
    case 'stop':
      if (!node) exit(0);
      else void (message.type === 'drain' ? node.drain() : node.stop()).then(() => exit(0), fail);
      break;
    case 'exit':
      exit(1);
      break;
    case 'process': {
      const changed = JSON.stringify(message.result) !== JSON.stringify(processState);
      processState = message.result;
      // The process changed: this thread's /readyz says so now, not at its next round.
      if (changed) void node?.readiness.recheck('threads');
      break;
    }
    case 'metrics-request':
      void (metrics.registry?.getMetricsAsJSON() ?? Promise.resolve([])).then((json) => post({ type: 'metrics-json', id: message.id, metrics: json }));
      break;
    case 'metrics-answer':
      asks.get(message.id)?.(message.text);
      break;
    case 'consume':
      mayConsume();
      break;
    case 'crash':
      setImmediate(() => {
        throw new Error('node thread crash (test hook)');
      });
      break;
  }
});

/**
 * The thread's side of the port, bound once its roles are up: the node sees
 * a listener at once (its port is the process's), and the socket comes later.
 */
let router: Router | null = null;
let bound: PublicListener | null = null;
let closed = false;
const deferred: PublicListener = {
  port: data.listen.port,
  close: () => {
    closed = true;
    bound?.close();
  },
  drainConnections: async (deadline) => bound?.drainConnections(deadline),
  destroyConnections: () => bound?.destroyConnections(),
};

node = await listenNode(data.config, log, {
  listen: async (r) => {
    router = r;
    return deferred;
  },
  processMetrics: metrics,
  beforeConsuming: () => {
    post({ type: 'consume-ready' });
    return consuming;
  },
});
post({ type: 'listening' });
const readiness = node.readiness;
// /readyz on any thread describes the process: this thread's checks, and `threads` for the rest.
readiness.add('threads', async () => {
  // Nothing heard from the main thread yet, or the process still starting: the start, not a failure.
  if (!processState.ok) {
    const error = processState.error ?? 'another thread is not ready';
    // The dependencies failing elsewhere in the process stay named (`failing`), beside the error.
    const details = Array.isArray(processState.failing) ? { failing: processState.failing } : {};
    throw processState.starting === true ? new StillStarting(error, details) : new CheckFailed(error, details);
  }
  const { ok: _ok, latencyMs: _latency, error: _error, starting: _starting, ...details } = processState;
  return details;
});
const reportReadiness = () => {
  const report = readiness.report();
  const failing = failingChecks(report.checks);
  post({ type: 'readiness', status: report.status === 'draining' ? 'draining' : failing.length > 0 ? 'not_ready' : 'ready', failing });
};
setInterval(reportReadiness, Math.max(100, Math.floor(data.config.health.intervalMs / 2))).unref();
node.up.then(
  async () => {
    if (!closed) bound = await listenPublic(router!, { ...data.config.server, host: data.listen.host, port: data.listen.port }, true);
    reportReadiness();
    post({ type: 'up' });
  },
  (err: unknown) => {
    post({ type: 'failed', message: err instanceof Error ? err.message : String(err) });
    exit(1);
  },
);
