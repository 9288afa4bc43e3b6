/**
 * Baseline: the least a Node HTTP ingress can do per request. It reads the
 * whole body (as streamgate must) and answers 202 with an event-shaped JSON at
 * once: no auth, no Kafka, no header checks. streamgate's throughput is
 * reported as a fraction of this ceiling, measured in the same run and on the
 * same machine so machine noise largely cancels out.
 *
 * argv[2] (lib/bare-http.mjs): `node-http` (default) serves it with node:http,
 * the floor a Node HTTP server reaches; `own` with streamgate's own server
 * (dist/http/server.js) and a trivial dispatch: our parser against node:http.
 *
 * Started by run.mjs, ingress-modes.mjs and server-ab.mjs with fork(); reports
 * its port over IPC.
 */
import { serveBare } from './lib/bare-http.mjs';

const ANSWER = '{"eventId":"evt_x"}';

serveBare(process.argv[2], () => ANSWER).then(
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
