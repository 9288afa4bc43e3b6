import type { Test } from 'tap';
import { connectDatabase } from '../../src/storage/db.js';
import { freshBackends } from './backends.js';
import { bootstrapDatabase, clientFor, startTestNode } from './nodes.js';
import { Waas } from './waas.js';

/**
 * What the /waas tests start from: fresh backends, a producer account, a
 * management node, its API client and /waas flows, and a database pool for
 * checks under the API (postgres.js connects on the first query).
 */
export async function waasTestbed(t: Test) {
  const backends = await freshBackends(t);
  const creds = await bootstrapDatabase(backends.databaseUrl);
  const node = await startTestNode(t, backends, { roles: ['management'] });
  const api = clientFor(node.port, creds);
  const sql = connectDatabase(backends.databaseUrl, 2);
  t.teardown(() => sql.end());
  return { backends, creds, node, api, waas: new Waas(api), sql };
}
