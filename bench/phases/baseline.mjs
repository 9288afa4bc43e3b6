import { fileURLToPath } from 'node:url';
import { forkChild, stopChild, waitForMessage } from '../lib/children.mjs';
import { measuredLoad } from '../lib/measured-load.mjs';
import { say } from '../lib/say.mjs';

const BARE_SERVER = fileURLToPath(new URL('../bare-server.mjs', import.meta.url));

/** The ceiling: the same requests against a bare uWebSockets.js server answering 202 at once. */
export async function baselinePhase({ options, load }) {
  say('baseline: bare uWebSockets.js');
  const bare = forkChild('bare-server', BARE_SERVER);
  const { port } = await waitForMessage(bare, 'ready');
  const baseline = await measuredLoad((seconds) => load(port, seconds), options, { server: bare.pid, autocannon: process.pid });
  await stopChild(bare);
  say(`   ${Math.round(baseline.acceptedPerS)} ev/s, p99 ${baseline.p99} ms`);
  return baseline;
}
