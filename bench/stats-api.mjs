// GET /v1/tenants/{t}/stats with 10 M events in the 7-day window: how long the
// answer takes, through a real node's HTTP API, per window, against the
// machine's Postgres and against the embedded PostgreSQL (the single-machine
// default). Issue 26 asks for <= 100 ms.
//
//   npm run build && nice -n 19 node bench/stats-api.mjs
//
// The rollup tables (migration 100) are filled as 10 M events over 7 days
// would leave them: the benched workspace has BENCH_QUEUES queues (10), each
// with a row every minute of the week (10 080 minute rows and 168 hour rows
// per queue: about 99 events a minute each), every event delivered (1 % after
// a retry, 0.2 % failed for good), latencies in a dozen buckets around 20 ms;
// BENCH_OTHER_WORKSPACES (50) other workspaces with 2 queues each share the
// tables, so the reads find their rows among others'. Rows made by
// generate_series straight into the tables: how many events they stand for
// changes the numbers in them, not how many there are, which is what the
// answer's cost depends on.
//
// Then BENCH_CALLS (100) calls per case after 10 warm-ups, one at a time over a
// kept-alive connection: median and p99 of the wall time the caller sees.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { loadConfig } from '../dist/config/load-config.js';
import { startNode } from '../dist/node/node.js';
import { createLogger } from '../dist/observability/logger.js';
import { bootstrap } from '../dist/api/setup/bootstrap.js';
import { migrate } from '../dist/storage/migrate.js';
import { startEmbeddedPostgres } from '../dist/storage/embedded-postgres.js';

const ADMIN = process.env.TEST_ADMIN_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const QUEUES = Number(process.env.BENCH_QUEUES ?? 10);
const OTHERS = Number(process.env.BENCH_OTHER_WORKSPACES ?? 50);
const CALLS = Number(process.env.BENCH_CALLS ?? 100);
const EVENTS = 10_000_000;
const MINUTES = 7 * 24 * 60;
const log = createLogger('silent');

/** Fills the rollups of `tenant` (and of the other workspaces) as a week of traffic. */
async function fill(sql, tenant) {
  const [ws] = await sql`SELECT id, license_id FROM workspaces WHERE public_id = ${tenant}`;
  const perMinute = Math.round(EVENTS / MINUTES / QUEUES);
  const workspaces = [{ id: ws.id, queues: QUEUES, perMinute }];
  for (let i = 0; i < OTHERS; i++) {
    const [o] = await sql`INSERT INTO workspaces (public_id, license_id, name) VALUES (${`ten_other${i}`}, ${ws.license_id}, ${`other ${i}`}) RETURNING id`;
    workspaces.push({ id: o.id, queues: 2, perMinute: 20 });
  }
  // The week ends at the current minute; rows every minute of it, for every queue.
  for (const w of workspaces) {
    for (const [table, stepS] of [['stats_minute', 60], ['stats_ten_minutes', 600], ['stats_hour', 3600]]) {
      const rows = MINUTES * 60 / stepS + 1;
      const n = w.perMinute * stepS / 60;
      await sql.unsafe(`
        INSERT INTO ${table} (workspace_id, at, queue_name, accepted, delivered, retrying, failed, attempts_2xx, attempts_5xx, attempts_4xx, latency)
        SELECT $1, to_timestamp((floor(extract(epoch FROM now()) / ${stepS}) - s) * ${stepS}), 'queue-' || q,
               n, n, ceil(n * 0.01), ceil(n * 0.002), n, ceil(n * 0.01), ceil(n * 0.002),
               ARRAY[0, 0, 0, 0, 0, 0, 1, 2, 3, 5, 8, (n * 0.2)::int, (n * 0.3)::int, (n * 0.2)::int, (n * 0.1)::int, 4, 2, 1, 1, 1]
        FROM generate_series(0, ${rows - 1}) AS s, generate_series(1, ${w.queues}) AS q, (SELECT $2::int AS n) AS c`, [w.id, n]);
    }
  }
  for (const table of ['stats_minute', 'stats_ten_minutes', 'stats_hour']) await sql.unsafe(`VACUUM ANALYZE ${table}`);
  const [counts] = await sql`SELECT (SELECT count(*) FROM stats_minute)::int AS minutes, (SELECT count(*) FROM stats_ten_minutes)::int AS tens,
    (SELECT count(*) FROM stats_hour)::int AS hours,
    (SELECT sum(accepted) FROM stats_hour WHERE workspace_id = ${ws.id} AND at > now() - interval '7 days')::bigint AS events,
    pg_total_relation_size('stats_minute') + pg_total_relation_size('stats_ten_minutes') + pg_total_relation_size('stats_hour') AS bytes`;
  return counts;
}

const quantile = (xs, q) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil(q * xs.length) - 1)];

async function measure(label, databaseUrl) {
  const sql = postgres(databaseUrl, { max: 2, onnotice: () => {} });
  const dataDir = mkdtempSync(join(tmpdir(), 'sg-bench-stats-'));
  let node;
  try {
    await migrate(sql);
    const creds = await bootstrap(sql, 'bench@example.com');
    const filled = await fill(sql, creds.tenantPublicId);
    console.log(`${label}: ${filled.minutes} minute rows, ${filled.tens} 10-minute rows, ${filled.hours} hour rows (${(Number(filled.bytes) / 1e6).toFixed(1)} MB), ${filled.events} events in the benched workspace's week`);
    const config = loadConfig({}, {
      dataDir, roles: ['management'], database: { url: databaseUrl }, redis: { url: '' }, kafka: { brokers: [] },
      server: { port: 0, host: '127.0.0.1' }, log: { level: 'silent' },
    });
    node = await startNode(config, log);
    const base = `http://127.0.0.1:${node.port}/v1/tenants/${creds.tenantPublicId}/stats`;
    const headers = { 'x-api-key': creds.buildKey, 'x-license-publicid': creds.licensePublicId };
    const rows = [];
    for (const query of ['window=1h', 'window=24h', 'window=7d', 'window=7d&queue=queue-3', 'window=24h&queue=queue-3']) {
      const ms = [];
      let bytes = 0;
      let totals = null;
      for (let i = 0; i < 10 + CALLS; i++) {
        const t0 = performance.now();
        const res = await fetch(`${base}?${query}`, { headers });
        const text = await res.text();
        const took = performance.now() - t0;
        if (res.status !== 200) throw new Error(`${query}: ${res.status} ${text.slice(0, 300)}`);
        if (i >= 10) ms.push(took);
        bytes = text.length;
        totals ??= JSON.parse(text).total.totals;
      }
      rows.push({ query, median: quantile(ms, 0.5), p99: quantile(ms, 0.99), bytes, accepted: totals.accepted });
      console.log(`  ${query}: median ${quantile(ms, 0.5).toFixed(1)} ms, p99 ${quantile(ms, 0.99).toFixed(1)} ms, ${bytes} bytes, ${totals.accepted} accepted in the window`);
    }
    return { label, filled, rows };
  } finally {
    await node?.stop();
    await sql.end();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const results = [];
// The machine's Postgres: a scratch database.
const name = `sg_bench_stats_${Date.now().toString(36)}`;
const admin = postgres(ADMIN, { max: 1, onnotice: () => {} });
await admin.unsafe(`CREATE DATABASE ${name}`);
try {
  const url = new URL(ADMIN);
  url.pathname = `/${name}`;
  const [{ server_version: version }] = await admin`SHOW server_version`;
  results.push({ ...(await measure(`Postgres ${version} (the machine's)`, url.toString())) });
} finally {
  await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.end();
}
// The embedded PostgreSQL, as a single-machine node runs it without DATABASE_URL.
const pgDir = mkdtempSync(join(tmpdir(), 'sg-bench-embedded-pg-'));
const embedded = await startEmbeddedPostgres(pgDir, 5400 + Math.floor(Math.random() * 500), log);
try {
  results.push(await measure('embedded PostgreSQL (embedded-postgres 18)', embedded.url));
} finally {
  await embedded.stop().catch(() => {});
  rmSync(pgDir, { recursive: true, force: true });
}

const lines = [
  '# GET /v1/tenants/{tenant}/stats with 10 M events in the window',
  '',
  `\`nice -n 19 node bench/stats-api.mjs\` (after \`npm run build\`), ${new Date().toISOString().slice(0, 10)}: the rollup tables filled as a week`,
  `of 10 M events leaves them in one workspace of ${QUEUES} queues (a row per queue and minute, and per queue and hour),`,
  `beside ${OTHERS} other workspaces of 2 queues each; then ${CALLS} calls per case (after 10 warm-ups) through a node's`,
  'HTTP API (management role, Build key), one at a time: the wall time the caller sees, median and p99.',
  `Shared 2-core box with other work running (load average ${loadavg().map((l) => l.toFixed(1)).join(' / ')} at the end of the run).`,
  '',
];
for (const r of results) {
  lines.push(`## ${r.label}`, '', `${r.filled.minutes} minute rows, ${r.filled.tens} 10-minute rows, ${r.filled.hours} hour rows, ${(Number(r.filled.bytes) / 1e6).toFixed(1)} MB with indexes; the benched workspace's week holds ${Number(r.filled.events).toLocaleString('en')} events.`, '');
  lines.push('| query | rows read | median | p99 | answer bytes | accepted in the window |', '|---|---|---|---|---|---|');
  for (const row of r.rows) {
    const queues = row.query.includes('queue=') ? 1 : QUEUES;
    const read = (row.query.includes('7d') ? 168 : row.query.includes('24h') ? 144 : 60) * queues;
    lines.push(`| \`${row.query}\` | ${read.toLocaleString('en')} | ${row.median.toFixed(1)} ms | ${row.p99.toFixed(1)} ms | ${row.bytes.toLocaleString('en')} | ${row.accepted.toLocaleString('en')} |`);
  }
  lines.push('');
}
writeFileSync(new URL('./results/stats-api.md', import.meta.url), `${lines.join('\n')}\n`);
console.log('written to bench/results/stats-api.md');
// embedded-postgres's own exit hook would stop the (already stopped) database again and throw.
process.exit(0);
