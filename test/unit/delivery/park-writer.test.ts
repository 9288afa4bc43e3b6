import t from 'tap';
import { ParkWriter } from '../../../src/delivery/park-writer.js';
import { MemoryParkedRepo, silentLog } from '../../helpers/lane-fakes.js';

const row = (seq: number, attempts = 0) => ({
  stream: 'g/tp', partition: 0, targetId: '1', laneKey: 'k:a', seq: BigInt(seq), eventId: `e${seq}`, record: Buffer.from('x'),
  attempts, firstAttemptAt: null, nextAttemptAt: null, lastError: null,
});

t.test('writes from many lanes share one upsert; each resolves once committed', async (t) => {
  const repo = new MemoryParkedRepo();
  const writer = new ParkWriter(repo.asRepo(), 5, silentLog);
  await Promise.all([writer.write([row(1)]), writer.write([row(2), row(3)]), writer.write([row(4)])]);
  t.equal(repo.upserts, 1);
  t.equal(repo.rows.size, 4);
});

t.test('the same row twice in one batch keeps the one with attempts', async (t) => {
  const repo = new MemoryParkedRepo();
  const writer = new ParkWriter(repo.asRepo(), 5, silentLog);
  await Promise.all([writer.write([row(1, 3)]), writer.write([row(1, 0)])]);
  t.equal([...repo.rows.values()][0]!.attempts, 3);
});

t.test('a failing database is retried until the write lands', async (t) => {
  const repo = new MemoryParkedRepo();
  repo.failNext = 3;
  const writer = new ParkWriter(repo.asRepo(), 1, silentLog);
  await writer.write([row(1)]);
  t.equal(repo.rows.size, 1);
});

t.test('close writes what waits, then refuses', async (t) => {
  const repo = new MemoryParkedRepo();
  const writer = new ParkWriter(repo.asRepo(), 10_000, silentLog);
  const pending = writer.write([row(1)]);
  await writer.close();
  await pending;
  t.equal(repo.rows.size, 1);
  await t.rejects(writer.write([row(2)]), /closed/);
});

t.test('close gives up on a dead database after its grace period, rejecting the waiting writes', async (t) => {
  const repo = new MemoryParkedRepo();
  repo.failNext = 1_000;
  const writer = new ParkWriter(repo.asRepo(), 1, silentLog);
  const pending = writer.write([row(1)]);
  pending.catch(() => {});
  await new Promise((r) => setTimeout(r, 20));
  const started = Date.now();
  await writer.close(200);
  t.ok(Date.now() - started < 2_000);
  await t.rejects(pending);
});
