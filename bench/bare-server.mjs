/**
 * Baseline: the least a uWebSockets.js ingress can do per request. It reads
 * the whole body (as streamgate must) and answers 202 with an event-shaped JSON
 * at once: no auth, no Kafka, no header parsing. streamgate's throughput is
 * reported as a fraction of this ceiling, measured in the same run and on the
 * same machine so machine noise largely cancels out.
 *
 * Started by run.mjs and ingress-modes.mjs with fork(), optionally behind a
 * relay (argv[2], see lib/listen-bare.mjs); reports its port over IPC.
 */
import uWS from 'uWebSockets.js';
import { listenBare } from './lib/listen-bare.mjs';

const ANSWER = '{"eventId":"evt_x"}';

const app = uWS.App();
app.post('/*', (res) => {
  let aborted = false;
  res.onAborted(() => {
    aborted = true;
  });
  // Body bytes are only counted, not kept: the point is to pull them off the
  // socket like a real handler, not to measure a memcpy.
  let bytes = 0;
  res.onData((chunk, isLast) => {
    bytes += chunk.byteLength;
    if (!isLast || aborted) return;
    res.cork(() => {
      res.writeStatus('202 Accepted').writeHeader('content-type', 'application/json').end(ANSWER);
    });
  });
});
app.any('/*', (res) => {
  res.writeStatus('404 Not Found').end();
});

// argv[2]: none (default), guard, legacy or pipe: see lib/listen-bare.mjs.
listenBare(app, process.argv[2]).then(
  (port) => process.send?.({ type: 'ready', port }),
  (err) => {
    console.error(`bare-server: ${err.message}`);
    process.exit(1);
  },
);

// Open keep-alive sockets would keep the process up; the bench is done with it.
process.on('SIGTERM', () => process.exit(0));
// The orchestrator died: do not linger.
process.on('disconnect', () => process.exit(0));
