import { readdirSync, readFileSync } from 'node:fs';
import { constants, monitorEventLoopDelay, performance, PerformanceObserver, type EventLoopUtilization } from 'node:perf_hooks';
import v8 from 'node:v8';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/**
 * The process series (CPU, memory, heap, file descriptors, handles, event
 * loop, GC) under prom-client's default names with the `streamgate_` prefix,
 * read when Prometheus scrapes. prom-client's collectDefaultMetrics() was
 * measured costing ingress 4–5 % of events/s (bench/results/metrics-cost.md: 94.8 % on
 * a quiet box, ≈ 100 % without it); most of its collectors are read at scrape
 * time already, the two that run all the time are the event-loop delay
 * monitor (a libuv timer every 10 ms) and the GC observer. Here the delay
 * monitor samples every `eventLoopResolutionMs` (100 ms by default: ten
 * samples a second still give percentiles over a scrape interval) and is reset
 * at each scrape, so its percentiles describe the last interval rather than
 * the whole life of the process; the GC observer stays (a few dozen callbacks a
 * second at full load).
 */
export function processMetrics(registry: Registry, eventLoopResolutionMs: number): { close(): void } {
  const registers = [registry];
  const p = 'streamgate_';

  const counterOf = (name: string, help: string, read: () => number) =>
    new Counter({
      name,
      help,
      registers,
      collect() {
        this.reset();
        this.inc(read());
      },
    });
  counterOf(`${p}process_cpu_user_seconds_total`, 'Total user CPU time spent in seconds.', () => process.cpuUsage().user / 1e6);
  counterOf(`${p}process_cpu_system_seconds_total`, 'Total system CPU time spent in seconds.', () => process.cpuUsage().system / 1e6);
  counterOf(`${p}process_cpu_seconds_total`, 'Total user and system CPU time spent in seconds.', () => {
    const usage = process.cpuUsage();
    return (usage.user + usage.system) / 1e6;
  });

  const gauge = (name: string, help: string, read: () => number) =>
    new Gauge({
      name,
      help,
      registers,
      collect() {
        this.set(read());
      },
    });
  const startSeconds = Math.round((performance.timeOrigin) / 1000);
  gauge(`${p}process_start_time_seconds`, 'Start time of the process since unix epoch in seconds.', () => startSeconds);
  gauge(`${p}process_resident_memory_bytes`, 'Resident memory size in bytes.', () => process.memoryUsage.rss());
  if (process.platform === 'linux') {
    gauge(`${p}process_open_fds`, 'Number of open file descriptors.', () => readdirSync('/proc/self/fd').length - 1);
    const max = maxFds();
    if (max !== null) gauge(`${p}process_max_fds`, 'Maximum number of open file descriptors.', () => max);
  }

  gauge(`${p}nodejs_heap_size_total_bytes`, 'Process heap size from Node.js in bytes.', () => v8.getHeapStatistics().total_heap_size);
  gauge(`${p}nodejs_heap_size_used_bytes`, 'Process heap size used from Node.js in bytes.', () => v8.getHeapStatistics().used_heap_size);
  gauge(`${p}nodejs_external_memory_bytes`, 'Node.js external memory size in bytes.', () => process.memoryUsage().external);
  const spaceGauge = (kind: string, read: (s: v8.HeapSpaceInfo) => number) =>
    new Gauge({
      name: `${p}nodejs_heap_space_size_${kind}_bytes`,
      help: `Process heap space size ${kind} from Node.js in bytes.`,
      labelNames: ['space'],
      registers,
      collect() {
        for (const space of v8.getHeapSpaceStatistics()) this.set({ space: space.space_name.replace(/_space$/, '') }, read(space));
      },
    });
  spaceGauge('total', (s) => s.space_size);
  spaceGauge('used', (s) => s.space_used_size);
  spaceGauge('available', (s) => s.space_available_size);

  new Gauge({
    name: `${p}nodejs_active_resources`,
    help: 'Active resources keeping the event loop alive, by type (process.getActiveResourcesInfo()).',
    labelNames: ['type'],
    registers,
    collect() {
      this.reset();
      const counts = new Map<string, number>();
      for (const type of process.getActiveResourcesInfo()) counts.set(type, (counts.get(type) ?? 0) + 1);
      for (const [type, n] of counts) this.set({ type }, n);
    },
  });
  gauge(`${p}nodejs_active_resources_total`, 'Total number of active resources.', () => process.getActiveResourcesInfo().length);
  const [major, minor, patch] = process.versions.node.split('.');
  new Gauge({ name: `${p}nodejs_version_info`, help: 'Node.js version info.', labelNames: ['version', 'major', 'minor', 'patch'], registers }).set(
    { version: process.version, major: major!, minor: minor!, patch: patch! },
    1,
  );

  const delay = monitorEventLoopDelay({ resolution: eventLoopResolutionMs });
  delay.enable();
  new Gauge({
    name: `${p}nodejs_eventloop_lag_seconds`,
    help: 'Lag of the event loop in seconds, sampled when scraped (time until a setImmediate callback runs).',
    registers,
    async collect() {
      const start = process.hrtime.bigint();
      await new Promise<void>((resolve) => setImmediate(resolve));
      this.set(Number(process.hrtime.bigint() - start) / 1e9);
    },
  });
  // The monitor's timer records its whole period (≥ the resolution): what the
  // loop added on top of it is the lag.
  const resolutionNs = eventLoopResolutionMs * 1e6;
  const nanos = (value: number): number => (Number.isFinite(value) ? Math.max(0, value - resolutionNs) / 1e9 : 0);
  const lag = (stat: string, help: string, read: () => number) => gauge(`${p}nodejs_eventloop_lag_${stat}_seconds`, help, read);
  // The percentile gauges read the histogram, the last one resets it for the next interval.
  lag('min', 'The minimum recorded event loop delay since the previous scrape.', () => nanos(delay.min));
  lag('max', 'The maximum recorded event loop delay since the previous scrape.', () => nanos(delay.max));
  lag('mean', 'The mean of the recorded event loop delays since the previous scrape.', () => nanos(delay.mean));
  lag('stddev', 'The standard deviation of the recorded event loop delays since the previous scrape.', () => (Number.isFinite(delay.stddev) ? delay.stddev / 1e9 : 0));
  lag('p50', 'The 50th percentile of the recorded event loop delays since the previous scrape.', () => nanos(delay.percentile(50)));
  lag('p90', 'The 90th percentile of the recorded event loop delays since the previous scrape.', () => nanos(delay.percentile(90)));
  lag('p99', 'The 99th percentile of the recorded event loop delays since the previous scrape.', () => {
    const value = nanos(delay.percentile(99));
    delay.reset();
    return value;
  });
  let elu: EventLoopUtilization = performance.eventLoopUtilization();
  gauge(`${p}nodejs_eventloop_utilization`, 'Share of the time since the previous scrape the event loop was busy (0–1).', () => {
    const now = performance.eventLoopUtilization();
    const share = performance.eventLoopUtilization(now, elu).utilization;
    elu = now;
    return share;
  });

  const gc = new Histogram({
    name: `${p}nodejs_gc_duration_seconds`,
    help: 'Garbage collection duration by kind, one of major, minor, incremental or weakcb.',
    labelNames: ['kind'],
    buckets: [0.001, 0.01, 0.1, 1, 2, 5],
    registers,
  });
  const kinds: Record<number, string> = {
    [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major',
    [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor',
    [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
    [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weakcb',
  };
  const gcObserver = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const detail = (entry as { detail?: { kind?: number } | null }).detail;
      const kind = kinds[detail?.kind ?? -1] ?? 'other';
      gc.observe({ kind }, entry.duration / 1000);
    }
  });
  gcObserver.observe({ entryTypes: ['gc'] });

  return {
    close() {
      delay.disable();
      gcObserver.disconnect();
    },
  };
}

function maxFds(): number | null {
  try {
    const line = readFileSync('/proc/self/limits', 'utf8')
      .split('\n')
      .find((l) => l.startsWith('Max open files'));
    const soft = line?.split(/\s+/)[3];
    return soft && /^\d+$/.test(soft) ? Number(soft) : null;
  } catch {
    return null;
  }
}
