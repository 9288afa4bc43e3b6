import autocannon from 'autocannon';

/** A JSON document of exactly `bytes` bytes (ASCII padding), the same for every request. */
export function makeBody(bytes) {
  const frame = '{"pad":""}';
  return Buffer.from(`{"pad":"${'x'.repeat(Math.max(0, bytes - frame.length))}"}`);
}

/**
 * The request set: one pre-built request per partition key. autocannon builds
 * requests without `setupRequest` once, up front, so varying the key this way
 * costs the load generator nothing per request (a `setupRequest` would rebuild
 * the whole 1 KB buffer on every send, eating CPU we want for the servers).
 */
export function makeRequests({ path, headers, body, keys }) {
  return Array.from({ length: keys }, (_, i) => ({
    method: 'POST',
    path,
    headers: { ...headers, 'x-service-partition-key': `k${i}` },
    body,
  }));
}

/**
 * Runs autocannon and reduces its result to what the report needs.
 * Throughput counts 2xx responses only: a non-2xx answer is not an accepted
 * event, and latency percentiles likewise cover 2xx only (excludeErrorStats),
 * so fast error answers cannot flatter either figure. Non-2xx, socket errors
 * and timeouts are returned alongside and always printed.
 */
export async function runLoad({ url, requests, connections, pipelining, duration, rate = 0, onTick }) {
  let client = 0;
  const run = autocannon({
    url,
    connections,
    pipelining,
    duration,
    ...(rate > 0 ? { overallRate: rate } : {}),
    excludeErrorStats: true,
    // Each connection cycles through its own share of the keys (connection c
    // gets keys c, c+N, c+2N, ...). Without this all connections would walk
    // k0, k1, ... in near lockstep, so the events in flight at any moment would
    // share a handful of keys (one Kafka partition, one delivery lane) instead
    // of spreading as real traffic does. Disjoint shares also mean each request
    // is built once in total, not once per connection: building 1000 x 50
    // buffers up front stalls the first responses by ~0.5 s and shows up as
    // max latency. Swapping the iterator's requests is safe even with
    // pipelining > 1 because setupClient runs before anything is written.
    setupClient: (c) => {
      const n = client++;
      const share = requests.filter((_, i) => i % connections === n % connections);
      (c.requestIterator ?? c).setRequests(share.length ? share : [requests[n % requests.length]]);
    },
    // The first request of each client is built from these before setupClient runs.
    method: 'POST',
    path: requests[0].path,
    headers: requests[0].headers,
    body: requests[0].body,
  });
  // Once a second: responses completed in that second (2xx or not), for the chart.
  if (onTick) run.on('tick', ({ counter }) => onTick(counter));
  const result = await run;
  const accepted = result['2xx'];
  return {
    durationS: result.duration,
    accepted,
    acceptedPerS: accepted / result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    max: result.latency.max,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    statusCodes: Object.fromEntries(Object.entries(result.statusCodeStats).map(([code, s]) => [code, s.count])),
  };
}
