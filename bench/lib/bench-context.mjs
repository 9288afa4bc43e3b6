import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { onCleanup } from './cleanup.mjs';
import { stopChild } from './children.mjs';
import { createBenchDatabase, dropBenchDatabase } from './bench-db.mjs';
import { bootstrapTenant, clusterEnv, configureRoute, startStreamgate } from './streamgate.mjs';
import { startReceiver } from './receiver-client.mjs';
import { makeBody, makeRequests, runLoad } from './load.mjs';
import { freePort } from './ports.mjs';
import { phaseLog } from './phase-log.mjs';

const QUEUE = 'bench';
const TARGET = 'bench-receiver';

/**
 * What every phase shares: a fresh database with a bootstrapped tenant, one
 * queue routed to one receiver (configured once through the management API
 * of a short-lived node: the config lives in Postgres, so every later node
 * finds it), the requests autocannon sends, and the receiver.
 */
export async function prepareBench({ runId, workDir, options }) {
  const brokers = (process.env.KAFKA_BROKERS || '127.0.0.1:9092').split(',');
  const db = await createBenchDatabase(runId);
  onCleanup(() => dropBenchDatabase(db.name));
  const configFile = join(workDir, 'streamgate.yaml');
  // Other runs/tests on this box publish cache invalidations on the default
  // prefix; a private one keeps their config writes from flushing our caches.
  await writeFile(configFile, `redis:\n  keyPrefix: "sgbench-${runId}:"\n`);
  const setupLog = phaseLog({ runId, brokers, label: 'setup' });
  const env = clusterEnv({ databaseUrl: db.url, brokers, topic: setupLog.topic, group: `sg-bench-${runId}-setup`, configFile, extra: { STREAMGATE_ALLOW_NETWORKS: '127.0.0.0/8' } });
  const creds = await bootstrapTenant(env);
  const receiver = await startReceiver({ bodyBytes: options.bodyBytes });
  const mgmt = await startStreamgate({ name: 'setup', env, port: await freePort(), roles: ['management'], logFile: join(workDir, 'setup.log') });
  const path = await configureRoute({ base: mgmt.base, creds, queue: QUEUE, target: TARGET, targetUrl: receiver.url });
  await stopChild(mgmt.child);
  const headers = { 'content-type': 'application/json', 'x-api-key': creds.ingressKey };
  const requests = makeRequests({
    path,
    headers,
    body: makeBody(options.bodyBytes),
    keys: options.keys,
  });
  const load = (port, duration, onTick) =>
    runLoad({ url: `http://127.0.0.1:${port}`, requests, duration, connections: options.connections, pipelining: options.pipelining, rate: options.rate, onTick });
  // ingress: for loads other than autocannon's (the latency phase's paced load)
  return { options, runId, workDir, brokers, env, creds, receiver, load, ingress: { path, headers }, queue: QUEUE };
}

