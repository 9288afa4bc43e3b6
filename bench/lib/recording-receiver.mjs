/**
 * A delivery target that keeps every delivery, not just counters (bench/receiver.mjs):
 * the event id (header x-service-event-id), the sender's sequence number (the
 * `"seq":N` the load generator put in the body, so that events whose 202 never
 * reached the sender can still be matched to a request) and the arrival time.
 * The recovery bench needs them to tell when delivery resumed, per partition
 * key, and which events came twice.
 *
 *   node recording-receiver.mjs child   (forked by startRecordingReceiver)
 *   child  -> { type: 'ready', port }
 *   parent -> { type: 'count' }  child -> { type: 'count', requests, unique }
 *   parent -> { type: 'dump' }   child -> { type: 'dump', ids, seqs, ats } (arrival order)
 */
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import { forkChild, waitForMessage } from './children.mjs';

const SELF = fileURLToPath(import.meta.url);

if (process.argv[2] === 'child') serve();

function serve() {
  const ids = [];
  const seqs = [];
  const ats = [];
  const seen = new Set();
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      // performance.timeOrigin + now(): wall-clock ms, comparable across processes.
      const at = performance.timeOrigin + performance.now();
      const id = req.headers['x-service-event-id'] ?? '';
      const seq = /"seq":(\d+)/.exec(Buffer.concat(chunks).toString('latin1'));
      ids.push(id);
      seqs.push(seq ? Number(seq[1]) : -1);
      ats.push(at);
      seen.add(id);
      res.writeHead(200, { 'content-length': '0' }).end();
    });
  });
  server.keepAliveTimeout = 30_000;
  server.listen(0, '127.0.0.1', () => process.send({ type: 'ready', port: server.address().port }));
  process.on('message', (msg) => {
    if (msg?.type === 'count') process.send({ type: 'count', requests: ids.length, unique: seen.size });
    else if (msg?.type === 'dump') process.send({ type: 'dump', ids, seqs, ats });
  });
  process.on('disconnect', () => process.exit(0));
  process.on('SIGTERM', () => process.exit(0));
}

/** Forks the recording receiver; returns its URL and two IPC queries. */
export async function startRecordingReceiver(name = 'recording-receiver') {
  const child = forkChild(name, SELF, ['child']);
  const { port } = await waitForMessage(child, 'ready');
  const ask = (type) =>
    new Promise((resolve, reject) => {
      waitForMessage(child, type, 30_000).then(resolve, reject);
      child.send({ type }, (err) => err && reject(new Error(`${name}: ${err.message}`)));
    });
  return {
    child,
    url: `http://127.0.0.1:${port}/hook`,
    /** { requests, unique } so far. */
    count: () => ask('count'),
    /** Every delivery so far: [{ id, seq, at }] in arrival order. */
    async deliveries() {
      const { ids, seqs, ats } = await ask('dump');
      return ids.map((id, i) => ({ id, seq: seqs[i], at: ats[i] }));
    },
  };
}
