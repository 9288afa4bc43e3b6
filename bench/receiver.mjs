/**
 * The delivery target: a plain node:http server that answers every POST with
 * 200 and counts what arrives. It runs in its own process so counting costs
 * no CPU in the orchestrator's load generator, and so its timestamps are not
 * delayed by autocannon's event loop.
 *
 * IPC protocol (with run.mjs):
 *   child  -> { type: 'ready', port }
 *   parent -> { type: 'stats' }   child -> { type: 'stats', ...counters }
 *   parent -> { type: 'reset' }   child -> { type: 'reset' }   (also ends tracking)
 *   parent -> { type: 'track', on } child -> { type: 'track' }
 *   parent -> { type: 'arrivals' } child -> { type: 'arrivals', seqs, ats }
 * GET /stats answers the same counters as JSON, for poking at by hand.
 *
 * Tracking (the latency phase): each body's `"seq":N` (bench/lib/paced-load.mjs)
 * is parsed and its FIRST arrival time kept, so a redelivery cannot shorten
 * or stretch a latency. Off unless asked for, and reset() ends it, so the
 * throughput phases do not pay for buffering and parsing every body.
 */
import http from 'node:http';

// Expected body size: a delivered body of another size is not "the exact body".
const EXPECTED_BYTES = Number(process.env.BENCH_BODY_BYTES ?? 0);
// A slow receiver (bench/delivery-backlog.mjs): every answer waits this long.
// `{ type: 'delay', ms }` changes it, so one receiver (one target URL) serves every backlog drain of a run.
let DELAY_MS = Number(process.env.BENCH_RECEIVER_DELAY_MS ?? 0);

let stats;
let seen;
let tracking = false;
// seq -> first arrival (wall-clock ms); insertion order = arrival order
let arrivals = new Map();
function reset() {
  seen = new Set();
  tracking = false;
  arrivals = new Map();
  stats = {
    requests: 0, // POSTs answered, duplicates included
    unique: 0, // distinct x-service-event-id values
    duplicates: 0, // same event id delivered again (at-least-once redelivery)
    missingId: 0, // POSTs without x-service-event-id
    wrongSize: 0, // body length differs from BENCH_BODY_BYTES
    bodyBytes: 0,
    // performance.timeOrigin + now(): wall-clock ms with sub-ms precision, comparable across processes
    firstAt: null,
    lastAt: null,
    // Requests open at once (arrived, not yet answered): flow control's ceiling, seen from the receiver.
    open: 0,
    maxOpen: 0,
    tracked: 0, // distinct seqs seen while tracking
  };
}
reset();

const now = () => performance.timeOrigin + performance.now();

const server = http.createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/stats') {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(stats));
    return;
  }
  const counted = stats;
  counted.open++;
  if (counted.open > counted.maxOpen) counted.maxOpen = counted.open;
  // Counted on the stats object it started in, so a reset mid-request cannot go negative.
  res.once('close', () => counted.open--);
  let size = 0;
  // Bodies are kept only while tracking; decided per request, so a toggle mid-body cannot half-buffer one.
  const chunks = tracking ? [] : null;
  req.on('data', (chunk) => {
    size += chunk.length;
    chunks?.push(chunk);
  });
  req.on('end', () => {
    const at = now();
    if (chunks && tracking) {
      const seq = /"seq":(\d+)/.exec(Buffer.concat(chunks).toString('latin1'));
      if (seq && !arrivals.has(Number(seq[1]))) {
        arrivals.set(Number(seq[1]), at);
        stats.tracked++;
      }
    }
    stats.requests++;
    stats.bodyBytes += size;
    stats.firstAt ??= at;
    stats.lastAt = at;
    if (EXPECTED_BYTES && size !== EXPECTED_BYTES) stats.wrongSize++;
    const id = req.headers['x-service-event-id'];
    if (!id) stats.missingId++;
    else if (seen.has(id)) stats.duplicates++;
    else {
      seen.add(id);
      stats.unique++;
    }
    if (DELAY_MS > 0) setTimeout(() => res.writeHead(200, { 'content-length': '0' }).end(), DELAY_MS);
    else res.writeHead(200, { 'content-length': '0' }).end();
  });
});
// Delivery keeps its sockets alive; make sure we do not close them under it mid-run.
server.keepAliveTimeout = 30_000;

server.listen(0, '127.0.0.1', () => {
  process.send?.({ type: 'ready', port: server.address().port });
});

process.on('message', (msg) => {
  if (msg?.type === 'stats') process.send({ type: 'stats', ...stats });
  else if (msg?.type === 'delay') {
    DELAY_MS = Number(msg.ms);
    process.send({ type: 'delay' });
  } else if (msg?.type === 'reset') {
    reset();
    process.send({ type: 'reset' });
  } else if (msg?.type === 'track') {
    tracking = Boolean(msg.on);
    process.send({ type: 'track' });
  } else if (msg?.type === 'arrivals') {
    // Two flat arrays: one message of numbers, not an object per event. `from`: only
    // the arrivals after the first `from` (a long run asks for what is new each time).
    const from = Number(msg.from ?? 0);
    process.send({ type: 'arrivals', seqs: [...arrivals.keys()].slice(from), ats: [...arrivals.values()].slice(from) });
  }
});
process.on('SIGTERM', () => process.exit(0));
process.on('disconnect', () => process.exit(0));
