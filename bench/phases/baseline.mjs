import { fileURLToPath } from 'node:url';
import { forkChild, stopChild, waitForMessage } from '../lib/children.mjs';
import { measuredLoad } from '../lib/measured-load.mjs';
import { say } from '../lib/say.mjs';

const BARE_SERVER = fileURLToPath(new URL('../bare-server.mjs', import.meta.url));

/** One bare server (lib/bare-http.mjs `kind`) under the same load as streamgate. */
async function bare(kind, { options, load }) {
  const child = forkChild(`bare-server-${kind}`, BARE_SERVER, [kind]);
  const { port } = await waitForMessage(child, 'ready');
  const result = await measuredLoad((seconds) => load(port, seconds), options, { server: child.pid, autocannon: process.pid });
  await stopChild(child);
  say(`   ${Math.round(result.acceptedPerS)} ev/s, p99 ${result.p99} ms, ${usPerRequest(result).toFixed(1)} µs CPU/request`);
  return result;
}

/** The server process's CPU µs per 2xx answer. */
export const usPerRequest = (r) => (r.cpu.server === null || !r.acceptedPerS ? NaN : ((r.cpu.server / 100) * 1e6) / r.acceptedPerS);

/**
 * The ceiling: the same requests against a bare node:http server answering 202
 * at once (the floor a Node HTTP server reaches), then against streamgate's own
 * server (dist/http/server.js) with a trivial dispatch: our parser against
 * node:http, in the same run. Returns the node:http result, with `own` on it.
 */
export async function baselinePhase(ctx) {
  say('baseline: bare node:http');
  const baseline = await bare('node-http', ctx);
  say("baseline: bare streamgate HttpServer (our parser, trivial dispatch)");
  baseline.own = await bare('own', ctx);
  return baseline;
}
