import t from 'tap';
import { freshDatabase } from '../../helpers/backends.js';
import { connectDatabase } from '../../../src/storage/db.js';
import { withDeadline } from '../../../src/storage/db-deadline.js';
import { ServiceError } from '../../../src/errors.js';

// The request-path pool against the real Postgres: queries behave as before,
// fragments and helpers still compose, and a query past the deadline answers
// 503 unavailable to its caller instead of holding the request.
const url = await freshDatabase(t);
const pool = connectDatabase(url, 2, 2_000);
t.teardown(() => pool.end({ timeout: 1 }));
const sql = withDeadline(pool, 300);

t.test('queries, fragments, helpers, unsafe and transactions work as on the plain pool', async (t) => {
  t.same([...(await sql`SELECT 1::int AS one`)], [{ one: 1 }]);
  const where = sql`WHERE n > ${1}`;
  t.same([...(await sql`SELECT n FROM (VALUES (1), (2), (3)) AS v(n) ${where} ORDER BY n`)].map((r) => r.n), [2, 3], 'a nested fragment');
  await sql`CREATE TABLE items (id int PRIMARY KEY, name text)`;
  await sql`INSERT INTO items ${sql([{ id: 1, name: 'a' }, { id: 2, name: 'b' }])}`;
  t.equal((await sql.unsafe('SELECT count(*)::int AS c FROM items'))[0]!.c, 2, 'unsafe and the insert helper');
  const inTx = await sql.begin(async (tx) => {
    await tx`INSERT INTO items VALUES (3, 'c')`;
    return (await tx`SELECT count(*)::int AS c FROM items`)[0]!.c as number;
  });
  t.equal(inTx, 3, 'a transaction');
  t.same([...(await sql`SELECT name FROM items WHERE id = ${3}`)], [{ name: 'c' }], 'committed');
});

t.test('past the deadline the caller gets 503 unavailable, at the deadline', async (t) => {
  const started = Date.now();
  const err = await sql`SELECT pg_sleep(2)`.then(
    () => null,
    (e: unknown) => e,
  );
  t.ok(err instanceof ServiceError && err.code === 'unavailable' && err.status === 503, 'unavailable');
  t.ok(Date.now() - started < 1_500, `answered after ${Date.now() - started} ms, not when the query ended`);
  const tx = await sql.begin((tx) => tx`SELECT pg_sleep(2)`).then(
    () => null,
    (e: unknown) => e,
  );
  t.ok(tx instanceof ServiceError && tx.code === 'unavailable', 'a transaction too');
});
