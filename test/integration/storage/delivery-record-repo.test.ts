import t from 'tap';
import { connectDatabase } from '../../../src/storage/db.js';
import { migrate } from '../../../src/storage/migrate.js';
import { DeliveryRecordRepo, type DeliveryRowInput } from '../../../src/storage/delivery-record-repo.js';
import { decodeAttempts } from '../../../src/storage/attempt-codec.js';
import { freshDatabase } from '../../helpers/backends.js';

/**
 * The attempt log's batched writes against a real Postgres. Two writers (two
 * threads or nodes around a rebalance, both delivering the same records)
 * may write batches holding the same rows, each in its own order.
 */
t.test('overlapping batches written at once, in opposite orders: no deadlock, every attempt kept', async (t) => {
  const sql = connectDatabase(await freshDatabase(t), 4);
  t.teardown(() => sql.end());
  await migrate(sql);
  const repo = new DeliveryRecordRepo(sql);
  const rows = (round: number, writer: string): DeliveryRowInput[] =>
    Array.from({ length: 300 }, (_, i) => ({
      eventId: `evt_${String(i).padStart(4, '0')}`,
      targetId: String(1 + (i % 3)),
      status: 'delivered',
      attempts: [{ at: new Date(0).toISOString(), writer, round } as never],
      stream: 'group/topic',
      partition: 0,
      offset: BigInt(i),
      receivedAt: 1_700_000_000_000 + i,
    }));
  const rounds = 15;
  for (let round = 0; round < rounds; round++) {
    const forward = rows(round, 'a');
    const backward = rows(round, 'b').reverse();
    // Each write is one transaction; both lock the same 300 rows.
    await Promise.all([repo.writeBatch([], forward), repo.writeBatch([], backward)]);
  }
  const stored = await sql<{ attempts: string }[]>`SELECT attempts FROM delivery_log`;
  t.equal(stored.length, 300, 'one row per (event, target)');
  t.equal(Math.min(...stored.map((r) => decodeAttempts(r.attempts, 0).length)), rounds * 2, 'every write appended its attempt');
});
