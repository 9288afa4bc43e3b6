import t from 'tap';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { Registry } from 'prom-client';
import { processMetrics } from '../../../src/observability/process-metrics.js';

async function read(registry: Registry): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const family of parsePrometheusTextFormat(await registry.metrics())) {
    const first = family.metrics[0] as { value?: string } | undefined;
    if (first?.value !== undefined) out.set(family.name, Number(first.value));
  }
  return out;
}

/** Busy until this process has used `ms` more of CPU (user + system). */
function spend(ms: number): void {
  const start = process.cpuUsage();
  for (;;) {
    const used = process.cpuUsage(start);
    if ((used.user + used.system) / 1000 >= ms) return;
  }
}

function block(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until);
}

t.test('the process series are read at scrape time, under prom-client default names', async (t) => {
  const registry = new Registry();
  const metrics = processMetrics(registry, 20);
  t.teardown(() => metrics.close());
  const first = await read(registry);
  for (const name of [
    'streamgate_process_cpu_seconds_total',
    'streamgate_process_resident_memory_bytes',
    'streamgate_process_start_time_seconds',
    'streamgate_nodejs_heap_size_used_bytes',
    'streamgate_nodejs_version_info',
    'streamgate_nodejs_eventloop_lag_seconds',
    'streamgate_nodejs_eventloop_lag_p99_seconds',
    'streamgate_nodejs_eventloop_utilization',
  ]) {
    t.ok(first.has(name), name);
  }
  t.ok(first.get('streamgate_process_resident_memory_bytes')! > 1e6, 'RSS in bytes');
  t.ok(Math.abs(first.get('streamgate_process_start_time_seconds')! - (Date.now() / 1000 - process.uptime())) < 5, 'start time since the epoch');
  // Counted in CPU time, not wall time: on a busy box 150 ms of wall clock may be far less CPU.
  spend(150);
  const second = await read(registry);
  t.ok(second.get('streamgate_process_cpu_seconds_total')! >= first.get('streamgate_process_cpu_seconds_total')! + 0.1, 'CPU seconds grow with work done');
});

t.test('event-loop lag: a blocked loop shows in the max, which starts again after the scrape', async (t) => {
  const registry = new Registry();
  const metrics = processMetrics(registry, 20);
  t.teardown(() => metrics.close());
  await new Promise((r) => setTimeout(r, 100));
  await read(registry); // starts a fresh interval
  await new Promise((r) => setTimeout(r, 60));
  block(300);
  await new Promise((r) => setTimeout(r, 60));
  const blocked = await read(registry);
  t.ok(blocked.get('streamgate_nodejs_eventloop_lag_max_seconds')! >= 0.2, `max lag ${blocked.get('streamgate_nodejs_eventloop_lag_max_seconds')} s after a 300 ms block`);
  t.ok(blocked.get('streamgate_nodejs_eventloop_utilization')! > 0.5, 'the loop was busy most of the interval');
  await new Promise((r) => setTimeout(r, 200));
  const calm = await read(registry);
  t.ok(calm.get('streamgate_nodejs_eventloop_lag_max_seconds')! < 0.2, 'the next interval does not carry the old max');
  t.ok(calm.get('streamgate_nodejs_eventloop_lag_min_seconds')! < 0.05, 'the sampling period itself is not counted as lag');
});

t.test('garbage collections are counted by kind', async (t) => {
  const registry = new Registry();
  const metrics = processMetrics(registry, 100);
  t.teardown(() => metrics.close());
  let keep: unknown[] = [];
  for (let i = 0; i < 200; i++) keep = [new Array(100_000).fill(i)];
  t.ok(keep.length);
  await new Promise((r) => setTimeout(r, 50)); // GC entries are delivered asynchronously
  const counts = (await registry.metrics())
    .split('\n')
    .filter((line) => line.startsWith('streamgate_nodejs_gc_duration_seconds_count{'))
    .map((line) => Number(line.split(' ').pop()));
  t.ok(counts.reduce((a, b) => a + b, 0) > 0, `collections observed: ${counts.join(', ')}`);
});
