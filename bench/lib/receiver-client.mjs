import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { forkChild, waitForMessage } from './children.mjs';

const RECEIVER = fileURLToPath(new URL('../receiver.mjs', import.meta.url));

/** Starts bench/receiver.mjs and returns a small handle to query it over IPC. */
export async function startReceiver({ bodyBytes }) {
  const child = forkChild('receiver', RECEIVER, [], { env: { ...process.env, BENCH_BODY_BYTES: String(bodyBytes) } });
  const { port } = await waitForMessage(child, 'ready');
  const ask = (type, extra = {}) =>
    new Promise((resolve, reject) => {
      waitForMessage(child, type, 10_000).then(resolve, reject);
      // With a callback a closed channel is reported here instead of as an
      // 'error' event on the child, which would otherwise crash the orchestrator.
      child.send({ type, ...extra }, (err) => err && reject(new Error(`receiver: ${err.message}`)));
    });
  async function waitFor(counter, expected, timeoutMs, { onProgress } = {}) {
    const until = Date.now() + timeoutMs;
    let stats = await ask('stats');
    let lastReport = Date.now();
    while (stats[counter] < expected && Date.now() < until) {
      await sleep(100);
      stats = await ask('stats');
      if (onProgress && Date.now() - lastReport > 5_000) {
        lastReport = Date.now();
        onProgress(stats);
      }
    }
    return { ...stats, complete: stats[counter] >= expected };
  }
  return {
    child,
    url: `http://127.0.0.1:${port}/hook`,
    stats: () => ask('stats'),
    reset: () => ask('reset'),
    /** Every answer from now on waits `ms` (a slow receiver). */
    setDelay: (ms) => ask('delay', { ms }),
    /**
     * From now on (until reset(), which ends it) the receiver keeps the first
     * arrival of each body's `"seq":N`: the latency phase's raw data.
     */
    track: (on = true) => ask('track', { on }),
    /** The tracked first arrivals: { seqs, ats } (wall-clock ms), in arrival order; `from`: after the first `from` of them. */
    arrivals: (from = 0) => ask('arrivals', { from }),
    /**
     * Polls until `unique` reaches `expected` or `timeoutMs` passes. Counting
     * distinct event ids (not requests) so redeliveries cannot fake completion.
     */
    waitForUnique: (expected, timeoutMs, opts) => waitFor('unique', expected, timeoutMs, opts),
    /** The same for tracked seqs: events of this load only, whatever else is still being delivered. */
    waitForTracked: (expected, timeoutMs, opts) => waitFor('tracked', expected, timeoutMs, opts),
    /**
     * For a log that cannot be counted while streamgate runs: waits until at
     * least `atLeast` events arrived (the 2xx count) and then nothing new for
     * `quietMs` (requests in flight at the load's deadline are acked and
     * delivered after it). `complete` is left to the caller, who counts the log later.
     */
    async waitForQuiet(atLeast, quietMs, timeoutMs, { onProgress } = {}) {
      const until = Date.now() + timeoutMs;
      let stats = await this.waitForUnique(atLeast, timeoutMs, { onProgress });
      let changedAt = Date.now();
      while (Date.now() - changedAt < quietMs && Date.now() < until) {
        await sleep(100);
        const next = await ask('stats');
        if (next.unique !== stats.unique) changedAt = Date.now();
        stats = next;
      }
      return stats;
    },
  };
}
