import { contextSwitches, cpuSeconds, peakRssMb } from './cpu.mjs';

/**
 * What one streamgate process (all its threads) cost over a phase: CPU
 * seconds from /proc/<pid>/stat, and its peak RSS (VmHWM: the kernel's own
 * high-water mark, so no spike between two samples is missed). `stop(events)`
 * turns the CPU into µs per event: the figure that stays comparable on a
 * shared box, where events/s alone moves with whatever else runs.
 */
export function startNodeMeter(pid) {
  const t0 = performance.now();
  const cpu0 = cpuSeconds(pid);
  const switches0 = contextSwitches(pid);
  return (events) => {
    const wallS = (performance.now() - t0) / 1000;
    const cpu1 = cpuSeconds(pid);
    const cpuS = cpu0 === null || cpu1 === null ? null : cpu1 - cpu0;
    const switches1 = contextSwitches(pid);
    return {
      // Context switches per event, every thread (threads that ended meanwhile are missed).
      switchesPerEvent: switches0 && switches1 && events
        ? { voluntary: (switches1.voluntary - switches0.voluntary) / events, involuntary: (switches1.involuntary - switches0.involuntary) / events }
        : null,
      wallS,
      cpuS,
      cpuPct: cpuS === null ? null : Math.round((cpuS / wallS) * 100),
      cpuUsPerEvent: cpuS === null || !events ? null : (cpuS * 1e6) / events,
      peakRssMb: peakRssMb(pid),
    };
  };
}

/**
 * Events/s over time for the chart: `count()` (a running total, e.g. the
 * receiver's unique deliveries) is read every `everyMs`; stop() returns
 * [{ t: seconds since start, perS }] for each interval.
 */
export function startRateSampler(count, everyMs = 500) {
  const t0 = performance.now();
  const series = [];
  let last = { t: 0, n: null };
  let busy = false;
  const timer = setInterval(async () => {
    if (busy) return;
    busy = true;
    try {
      const n = await count();
      const t = (performance.now() - t0) / 1000;
      if (last.n !== null) series.push({ t, perS: (n - last.n) / (t - last.t) });
      last = { t, n };
    } catch {
      // a missed sample only widens the next interval
    } finally {
      busy = false;
    }
  }, everyMs);
  // The first reading is the zero point.
  count().then((n) => {
    if (last.n === null) last = { t: (performance.now() - t0) / 1000, n };
  }, () => {});
  return () => {
    clearInterval(timer);
    return series;
  };
}

/** A series' value in a /metrics text, summed over its lines (a threaded node reports one per thread; labels ignored). */
export function metricSum(text, name) {
  let sum = 0;
  for (const m of text.matchAll(new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.e+]+)$`, 'gm'))) sum += Number(m[1]);
  return sum;
}

/**
 * The node's log writer so far, from its /metrics (every thread's lines
 * summed): flushes (produce requests; lmdb puts on the embedded log) and the
 * records they carried. Two readings apart give records per produce request.
 */
export async function produceCounts(base) {
  const text = await (await fetch(`${base}/metrics`, { signal: AbortSignal.timeout(3_000) })).text();
  const sum = (name) => metricSum(text, name);
  return {
    flushes: sum('streamgate_log_produce_batch_records_count'),
    records: sum('streamgate_log_produce_batch_records_sum'),
    // The reader's fetch answers that brought records (builds before the series: 0).
    fetches: sum('streamgate_log_fetch_batch_records_count'),
    fetched: sum('streamgate_log_fetch_batch_records_sum'),
  };
}

/** Records per produce request and per fetch answer between two produceCounts readings (null where none). */
export function logBatching(before, after) {
  if (!before || !after) return { recordsPerProduce: null, recordsPerFetch: null };
  const per = (n, d) => (d > 0 ? n / d : null);
  return {
    recordsPerProduce: per(after.records - before.records, after.flushes - before.flushes),
    recordsPerFetch: per(after.fetched - before.fetched, after.fetches - before.fetches),
  };
}

/** Series from autocannon's once-a-second tick counts: [{ t, perS }]. */
export function tickSeries() {
  const series = [];
  return { onTick: (n) => series.push({ t: series.length + 1, perS: n }), series };
}

const MEMORY_SERIES = {
  heapUsed: 'streamgate_nodejs_heap_size_used_bytes',
  heapTotal: 'streamgate_nodejs_heap_size_total_bytes',
  external: 'streamgate_nodejs_external_memory_bytes',
  rss: 'streamgate_process_resident_memory_bytes',
};

/**
 * Where the memory is: the node's own /metrics read every `everyMs` (V8 heap
 * used and reserved, external buffers, RSS as the node reports it), keeping
 * the largest of each in MB. RSS alone does not say whether a peak is live
 * objects, garbage V8 has not collected yet, or buffers outside the heap.
 */
export function startMemorySampler(base, everyMs = 2_000) {
  const peak = Object.fromEntries(Object.keys(MEMORY_SERIES).map((k) => [k, 0]));
  const read = async () => {
    const text = await (await fetch(`${base}/metrics`, { signal: AbortSignal.timeout(1_500) })).text();
    for (const [key, name] of Object.entries(MEMORY_SERIES)) {
      peak[key] = Math.max(peak[key], Math.round(metricSum(text, name) / 1048576));
    }
  };
  let busy = false;
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    read().catch(() => {}).finally(() => (busy = false));
  }, everyMs);
  return () => {
    clearInterval(timer);
    return peak;
  };
}
