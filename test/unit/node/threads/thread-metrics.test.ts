import t from 'tap';
import { Counter, Gauge, Registry } from 'prom-client';
import { aggregateThreads } from '../../../../src/node/threads/thread-metrics.js';

/** A registry as one thread would have it. */
async function thread(requests: number, lanes: number, cpu: number): Promise<unknown[]> {
  const registry = new Registry();
  new Counter({ name: 'streamgate_http_requests_total', help: 'h', labelNames: ['route'], registers: [registry] }).inc({ route: 'events' }, requests);
  new Gauge({ name: 'streamgate_delivery_lanes_active', help: 'h', registers: [registry] }).set(lanes);
  new Counter({ name: 'streamgate_process_cpu_seconds_total', help: 'h', registers: [registry] }).inc(cpu);
  new Gauge({ name: 'streamgate_nodejs_eventloop_lag_p99_seconds', help: 'h', registers: [registry] }).set(lanes / 100);
  new Gauge({ name: 'streamgate_nodejs_version_info', help: 'h', labelNames: ['version'], registers: [registry] }).set({ version: 'v20' }, 1);
  new Gauge({ name: 'streamgate_nodejs_eventloop_utilization', help: 'h', registers: [registry] }).set(lanes / 10);
  return registry.getMetricsAsJSON();
}

t.test('the process series sum the threads, take process-wide ones once and show each thread', async (t) => {
  const text = await aggregateThreads([
    { index: 0, metrics: await thread(10, 3, 5) },
    { index: 1, metrics: await thread(30, 4, 5) },
  ]);
  t.match(text, /streamgate_http_requests_total\{route="events"\} 40/);
  t.match(text, /streamgate_delivery_lanes_active 7/);
  t.match(text, /streamgate_process_cpu_seconds_total 5\n/, 'process-wide: the main thread\'s reading only');
  t.match(text, /streamgate_threads 2/);
  t.match(text, /streamgate_nodejs_eventloop_lag_p99_seconds 0\.04\n/, 'event-loop lag: the slowest thread\'s');
  t.match(text, /streamgate_nodejs_version_info\{version="v20"\} 1\n/, 'an info series once');
  t.match(text, /streamgate_nodejs_eventloop_utilization 0\.35\n/, 'event-loop utilization: the mean over the threads, not a sum');
  t.match(text, /streamgate_thread_http_requests_total\{thread="0"\} 10/);
  t.match(text, /streamgate_thread_http_requests_total\{thread="1"\} 30/);
});
