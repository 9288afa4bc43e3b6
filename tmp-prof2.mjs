import postgres from 'postgres';
const sql = postgres(`postgres://postgres@127.0.0.1:5432/${process.env.DB}`, { max: 1, onnotice: () => {} });
const ws = (await sql`SELECT min(id)::text AS id FROM workspaces`)[0].id;
const now = Math.floor(Date.now() / 1000);
const N = 64;
const counts = ['accepted','delivered','retrying','failed','attempts_2xx','attempts_3xx','attempts_4xx','attempts_5xx','attempts_timeout','attempts_network'];
const variants = {
  float8cols: `${counts.map((c) => `sum(${c})::float8`).join(',')}, ${Array.from({ length: N }, (_, i) => `coalesce(sum(latency[${i + 1}]),0)::float8`).join(',')}`,
  int8cols: `${counts.map((c) => `sum(${c})::int8`).join(',')}, ${Array.from({ length: N }, (_, i) => `coalesce(sum(latency[${i + 1}]),0)::int8`).join(',')}`,
  int8array: `array[${counts.map((c) => `sum(${c})`).join(',')}]::text, array[${Array.from({ length: N }, (_, i) => `coalesce(sum(latency[${i + 1}]),0)`).join(',')}]::text`,
  countsOnly: `array[${counts.map((c) => `sum(${c})`).join(',')}]::text`,
};
for (const [table, step, secs] of [['stats_minute', 600, 86400], ['stats_hour', 3600, 604800], ['stats_minute', 60, 3600]]) {
  for (const [name, cols] of Object.entries(variants)) {
    const q = `SELECT queue_name, (floor(extract(epoch FROM at) / $2) * $2)::int8 AS step, ${cols} FROM ${table}
      WHERE workspace_id = $1 AND at >= to_timestamp($3) AND at < to_timestamp($4) GROUP BY 1, 2`;
    const ms = [];
    let server = 0;
    for (let i = 0; i < 8; i++) {
      const a = performance.now();
      await sql.unsafe(q, [ws, step, now - secs, now + 60]).values();
      ms.push(performance.now() - a);
    }
    const plan = await sql.unsafe(`EXPLAIN ANALYZE ${q}`, [ws, step, now - secs, now + 60]);
    server = plan.map((r) => r['QUERY PLAN']).find((l) => l.startsWith('Execution Time'));
    console.log(table, step, name, 'client median', ms.sort((x, y) => x - y)[4].toFixed(1), server);
  }
}
await sql.end();
