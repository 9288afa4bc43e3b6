import t, { type Test } from 'tap';
import { freshBackends } from '../../helpers/backends.js';
import { bootstrapDatabase, clientFor, startTestNode } from '../../helpers/nodes.js';
import { startReceiver } from '../../helpers/receiver.js';
import { waitForEvent, sleep } from '../../helpers/delivery.js';
import { Scrape } from '../../helpers/prometheus.js';
import { connectDatabase, type Sql } from '../../../src/storage/db.js';
import { bootstrap } from '../../../src/api/setup/bootstrap.js';
import type { ApiClient } from '../../helpers/api-client.js';

/**
 * Postgres retention end to end (docs/operations.md#retention): with
 * retention.hours 0.01 (36 s; partitions of 10 s) and a sweep every 2 s,
 * events are delivered and readable, then answer 404 and no row of any table
 * of the database mentions them (by id, as text or inside bytes; delivery rows,
 * which carry no id, by their event's log position and receive time). A workspace with a shorter retention of its
 * own (7.2 s) loses its events first while the other keeps its own.
 */
const RETENTION_HOURS = 0.01;
const SHORT_HOURS = 0.002;
const backends = await freshBackends(t);
const creds = await bootstrapDatabase(backends.databaseUrl);
const sql = connectDatabase(backends.databaseUrl, 2);
t.teardown(() => sql.end());
const otherCreds = await bootstrap(sql, 'other@example.test');
const node = await startTestNode(t, backends, { retention: { hours: RETENTION_HOURS, sweepIntervalMs: 2_000, deleteBatchRows: 2 } });
const short = clientFor(node.port, creds);
const kept = clientFor(node.port, otherCreds);
await sql`UPDATE workspaces SET retention_hours = ${SHORT_HOURS} WHERE public_id = ${creds.tenantPublicId}`;

/** Ids of `ids` that some row of some table of the database mentions, as text or inside bytes (msgpack records). */
async function mentioned(db: Sql, ids: readonly string[]): Promise<string[]> {
  const tables = await db<{ schema: string; name: string }[]>`
    SELECT table_schema AS schema, table_name AS name FROM information_schema.tables
    WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('pg_catalog', 'information_schema')`;
  const found = new Set<string>();
  for (const { schema, name } of tables) {
    for (const id of ids) {
      const hex = Buffer.from(id).toString('hex');
      const [row] = await db<{ n: number }[]>`
        SELECT count(*)::int AS n FROM ${db(schema)}.${db(name)} AS x
        WHERE x::text LIKE ${`%${id}%`} OR x::text LIKE ${`%${hex}%`}`;
      if (row!.n > 0) found.add(`${id} in ${schema}.${name}`);
    }
  }
  return [...found];
}

/** Rows left in event_log of these events (their deliveries are inside their rows, migration 090). */
async function inEventLog(ids: readonly string[]): Promise<number> {
  const [row] = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM event_log WHERE event_id = ANY(${ids}::text[])`;
  return row!.n;
}

async function postDelivered(t: Test, api: ApiClient, queue: string, n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const posted = await api.postEvent(queue, JSON.stringify({ queue, i }));
    t.equal(posted.status, 202);
    ids.push(posted.body.eventId as string);
  }
  for (const id of ids) await waitForEvent(api, id, (e) => e.deliveries[0]?.status === 'delivered');
  return ids;
}

async function until(what: string, check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  for (const end = Date.now() + timeoutMs; Date.now() < end; await sleep(500)) if (await check()) return;
  throw new Error(`timed out waiting for ${what}`);
}

t.test('past retention the records are gone from every table; a shorter workspace retention goes first', async (t) => {
  const receiver = await startReceiver(t);
  await short.wire('orders', 'shop', `${receiver.url}/short`);
  await kept.wire('orders', 'shop', `${receiver.url}/kept`);
  const shortIds = await postDelivered(t, short, 'orders', 5);
  const keptIds = await postDelivered(t, kept, 'orders', 5);
  const posted = Date.now();
  t.equal(await inEventLog([...shortIds, ...keptIds]), 10, 'recorded: 10 events');
  const [recorded] = await sql<{ n: number }[]>`
    SELECT count(*)::int AS n FROM event_log WHERE event_id = ANY(${[...shortIds, ...keptIds]}::text[]) AND deliveries ~ ':d:'`;
  t.equal(recorded!.n, 10, 'each with its delivery');
  const [one] = await sql<{ name: string }[]>`
    SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
    WHERE i.inhparent = 'event_log'::regclass AND c.relname <> 'event_log_default' LIMIT 1`;
  t.match(one?.name, /^event_log_p\d{8}t\d{6}_\d{8}t\d{6}$/, 'time partitions exist ahead');
  const [def] = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM event_log_default`;
  t.equal(def!.n, 0, 'nothing landed in DEFAULT');

  // 7.2 s for the short workspace, in batches of 2 rows per statement.
  await until('the short workspace\'s records to go', async () => (await inEventLog(shortIds)) === 0, 60_000);
  t.ok(Date.now() - posted < RETENTION_HOURS * 3_600_000, 'before the global retention');
  t.equal(await inEventLog(keptIds), 5, 'the other workspace keeps its own');
  const stillThere = await kept.manage('GET', kept.tenantPath(`/events/${keptIds[0]}`));
  t.equal(stillThere.status, 200, 'and shows them');
  const gone = await short.manage('GET', short.tenantPath(`/events/${shortIds[0]}`));
  t.equal(gone.status, 404, 'the short workspace\'s event: 404');
  t.match(gone.body.error, { code: 'not_found', message: /expired/ });
  t.same(await mentioned(sql, shortIds), [], 'no row of any table mentions the short workspace\'s events');

  // 36 s and at most one 10 s partition more, then the partition is dropped whole.
  await until('the other workspace\'s records to go', async () => (await inEventLog(keptIds)) === 0, 150_000);
  for (const id of keptIds) {
    const answer = await kept.manage('GET', kept.tenantPath(`/events/${id}`));
    t.equal(answer.status, 404, `${id}: 404`);
  }
  const redeliver = await kept.manage('POST', kept.tenantPath(`/events/${keptIds[0]}/redeliver`));
  t.equal(redeliver.status, 404, 'redeliver: 404 too');
  t.same(await mentioned(sql, [...shortIds, ...keptIds]), [], 'no row of any table mentions any of the events');

  const res = await fetch(`http://127.0.0.1:${node.port}/metrics`);
  const scrape = new Scrape(await res.text());
  t.ok(scrape.families.has('streamgate_retention_bytes'), 'bytes kept per table exported');
  t.ok(scrape.value('streamgate_retention_bytes', { table: 'event_log' }) > 0, 'event_log bytes (its partitions and indexes)');
  t.ok(scrape.families.has('streamgate_retention_rows'), 'rows per table exported');
  t.ok(scrape.value('streamgate_retention_sweep_duration_seconds') > 0, 'the last sweep\'s duration');
});
