import t from 'tap';
import { setTimeout as sleep } from 'node:timers/promises';
import { freshDatabase } from '../../helpers/backends.js';
import { TcpProxy } from '../../helpers/tcp-proxy.js';
import { connectDatabase } from '../../../src/storage/db.js';

// A Postgres connection that drops while postgres.js is still setting it up
// (right after login it asks for the array types) must fail the waiting query
// and nothing else. Unpatched, postgres.js 3.4.9 also rejected a promise nobody
// awaited: the node died of an unhandled `read ECONNRESET` during an outage
// (config/patches/postgres+3.4.9.patch, docs/decisions/postgres-driver-patch.md).
const url = await freshDatabase(t);

t.test('a link reset during the array-type lookup fails the query, not the process; the next connection works', async (t) => {
  let trap = true;
  const unhandled: unknown[] = [];
  const onUnhandled = (err: unknown) => unhandled.push(err);
  process.on('unhandledRejection', onUnhandled);
  t.teardown(() => void process.off('unhandledRejection', onUnhandled));

  const proxy = await TcpProxy.start(t, `${new URL(url).hostname}:${new URL(url).port || '5432'}`, (client, upstream) => {
    client.on('data', (chunk: Buffer) => {
      // The lookup postgres.js sends after ReadyForQuery on every new connection.
      if (trap && chunk.includes('pg_catalog.pg_type')) {
        client.resetAndDestroy();
        upstream.destroy();
        return;
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => client.write(chunk));
  });
  const sql = connectDatabase(proxy.rewrite(url), 1, 2_000);
  t.teardown(() => sql.end({ timeout: 0 }));

  await t.rejects(sql`SELECT 1 AS one`, { code: 'ECONNRESET' }, 'the waiting query fails with the link error');
  await sleep(100);
  t.same(unhandled.map(String), [], 'no unhandled rejection');

  trap = false;
  t.same([...(await sql`SELECT ${[1, 2]}::int[] AS xs`)], [{ xs: [1, 2] }], 'a new connection sets up and serves (arrays included)');
});
