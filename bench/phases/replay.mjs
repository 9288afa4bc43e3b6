import { join } from 'node:path';
import { stopChild } from '../lib/children.mjs';
import { freePort } from '../lib/ports.mjs';
import { startStreamgate } from '../lib/streamgate.mjs';
import { startCpuMeter } from '../lib/cpu.mjs';
import { summarizeDelivery } from '../lib/findings.mjs';
import { now, say } from '../lib/say.mjs';

/**
 * Delivery capacity on its own: once the first node drained and stopped, a
 * fresh `--roles delivery` node with a new consumer group replays the whole
 * log (`total` records) with no ingress load.
 */
export async function replayPhase({ backend, options, receiver, workDir, total }) {
  const tag = backend.name;
  say(`${tag}: delivery-only replay of ${total} events`);
  await receiver.reset();
  const spawnedAt = now();
  const replay = await startStreamgate({
    name: `streamgate-${tag}-delivery`,
    env: { ...backend.env, STREAMGATE_KAFKA_GROUP: backend.groups.replay },
    port: await freePort(),
    roles: ['delivery'],
    logFile: join(workDir, `streamgate-${tag}-delivery.log`),
  });
  const meter = startCpuMeter({ streamgate: replay.child.pid, receiver: receiver.child.pid, ...backend.pids });
  const replayed = await receiver.waitForUnique(total, options.drainTimeout * 1000, { onProgress: (s) => say(`   ${s.unique}/${total}`) });
  const deliveryOnly = summarizeDelivery(replayed, total, { startRef: spawnedAt, tailRef: null });
  deliveryOnly.cpu = meter();
  say(`   ${Math.round(deliveryOnly.perS)} ev/s delivered`);
  const shutdown = await stopChild(replay.child, 30_000);
  return { deliveryOnly, shutdown, logs: replay.logs, readyMs: replay.readyMs };
}
