import t from 'tap';
import { RedeliveryJobRunner } from '../../../src/jobs/redelivery-job-runner.js';
import type { RedeliveryOrder } from '../../../src/api/events/redeliver.js';
import { createLogger } from '../../../src/observability/logger.js';
import type { FailedDelivery, RedeliveryJobRow } from '../../../src/storage/redelivery-job-repo.js';
import type { MissedDelivery, MissedPosition } from '../../../src/storage/missed-delivery-repo.js';

/** The job table and the failed deliveries, in memory: what the runner reads and writes. */
class FakeJobs {
  progressed = { done: 0, failed: 0 };
  finished: { status: string; error: string | null } | null = null;
  pages = 0;
  /** Resolves the next page only when released (to stop a job mid-way). */
  gate: Promise<void> | null = null;

  private readonly failed: FailedDelivery[];
  private readonly pageSize: number;
  constructor(failed: FailedDelivery[], pageSize = 100) {
    this.failed = failed;
    this.pageSize = pageSize;
  }

  async nextFailed(_r: unknown, after: { receivedAt: string; eventId: string } | null, limit: number): Promise<FailedDelivery[]> {
    if (this.gate) await this.gate;
    this.pages++;
    const start = after ? this.failed.findIndex((d) => d.eventId === after.eventId) + 1 : 0;
    return this.failed.slice(start, start + Math.min(limit, this.pageSize));
  }
  /** Set: the job was cancelled (its row is no longer running). */
  cancelled = false;
  async progress(_id: string, done: number, failed: number): Promise<boolean> {
    if (this.cancelled) return false;
    this.progressed.done += done;
    this.progressed.failed += failed;
    return true;
  }
  async heartbeat(): Promise<void> {}
  async finish(_id: string, status: 'done' | 'failed', error: string | null = null): Promise<void> {
    this.finished ??= { status, error };
  }
}

const deliveries = (n: number): FailedDelivery[] =>
  Array.from({ length: n }, (_, i) => ({ eventId: `evt_${String(i).padStart(24, '0')}`, receivedAt: `2026-01-01T00:00:${String(i % 60).padStart(2, '0')}.000000Z`, logPartition: i % 4, logOffset: BigInt(i) }));

const job = (total: number, kind: RedeliveryJobRow['kind'] = 'failed'): RedeliveryJobRow => ({
  id: '1', publicId: 'rdj_test', workspaceId: '1', targetId: '7', kind, from: new Date(0), to: new Date(), cutoff: '2026-01-01T00:00:00.000000Z',
  status: 'running', total, done: 0, failed: 0, error: null, createdAt: new Date(), finishedAt: null,
});

const waitFor = async (check: () => boolean) => {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 5));
};

t.test('a job hands every failed delivery to the redelivery path once, in batches, and counts what the log no longer holds', async (t) => {
  const failed = deliveries(250);
  const jobs = new FakeJobs(failed);
  const handed: RedeliveryOrder[] = [];
  const runner = new RedeliveryJobRunner(jobs, async (orders) => {
    handed.push(...orders);
    return { gone: orders.filter((o) => o.logOffset % 50n === 0n) };
  }, createLogger('silent'));
  runner.start(job(250));
  await waitFor(() => jobs.finished !== null);
  t.same(jobs.finished, { status: 'done', error: null });
  t.same(handed.map((o) => o.eventId), failed.map((d) => d.eventId), 'each once, oldest first');
  t.ok(handed.every((o) => o.targetIds.length === 1 && o.targetIds[0] === '7'), 'to the job\'s target only');
  t.same(jobs.progressed, { done: 245, failed: 5 });
  t.equal(jobs.pages, 4, 'three pages of up to 100, then the empty one');
});

t.test('draining the node stops its jobs between batches and marks them failed', async (t) => {
  const jobs = new FakeJobs(deliveries(300));
  let handed = 0;
  const runner = new RedeliveryJobRunner(jobs, async (orders) => {
    handed += orders.length;
    // After the first batch, the next page waits until the node drains.
    let release!: () => void;
    jobs.gate = new Promise((r) => (release = r));
    setTimeout(() => release(), 20);
    return { gone: [] };
  }, createLogger('silent'));
  runner.start(job(300));
  await waitFor(() => handed > 0);
  await runner.drain();
  t.match(jobs.finished, { status: 'failed', error: /stopped/ });
  t.ok(handed < 300, `stopped early (${handed} of 300 handed over)`);
  t.equal(jobs.progressed.done, handed, 'what was handed over is counted');
});

t.test('an error fails the job with a message that leaks nothing', async (t) => {
  const jobs = new FakeJobs(deliveries(10));
  const runner = new RedeliveryJobRunner(jobs, async () => {
    throw new Error('connection to 10.0.0.5:5432 refused (password=…)');
  }, createLogger('silent'));
  runner.start(job(10));
  await waitFor(() => jobs.finished !== null);
  t.match(jobs.finished, { status: 'failed', error: /stopped on an error/ });
  t.notMatch(jobs.finished!.error!, /10\.0\.0\.5|password/);
});

/** The replay query in memory: missed deliveries in log order, keyset on (partition, offset). */
class FakeMissed {
  private readonly rows: MissedDelivery[];
  constructor(rows: MissedDelivery[]) {
    this.rows = rows;
  }
  async next(_r: unknown, after: MissedPosition | null, limit: number): Promise<MissedDelivery[]> {
    const sorted = [...this.rows].sort((a, b) => a.logPartition - b.logPartition || Number(a.logOffset - b.logOffset));
    const rest = after ? sorted.filter((d) => d.logPartition > after.logPartition || (d.logPartition === after.logPartition && d.logOffset > after.logOffset)) : sorted;
    return rest.slice(0, limit);
  }
}

t.test('a replay job hands each missed delivery over once, in log order, into one lane per partition key', async (t) => {
  const missed: MissedDelivery[] = Array.from({ length: 230 }, (_, i) => ({
    eventId: `evt_${i}`, receivedAt: '2026-01-01T00:00:00.000000Z', logPartition: i % 2, logOffset: BigInt(1000 - i), partitionKey: i % 5 === 0 ? null : `k${i % 3}`,
  }));
  const jobs = new FakeJobs([]);
  const ends: string[] = [];
  const handed: RedeliveryOrder[] = [];
  const runner = new RedeliveryJobRunner(jobs, async (orders) => {
    handed.push(...orders);
    return { gone: [] };
  }, createLogger('silent'), new FakeMissed(missed), async (_job, end) => void ends.push(`${end.status} ${end.handedOver}`));
  runner.start(job(230, 'replay'));
  await waitFor(() => ends.length > 0);
  t.same(jobs.finished, { status: 'done', error: null });
  t.same(ends, ['done 230'], 'the end is told once, with the count');
  t.same(handed.map((o) => o.eventId).sort(), missed.map((d) => d.eventId).sort(), 'each missed delivery once');
  for (const partition of [0, 1]) {
    const offsets = handed.filter((o) => o.logPartition === partition).map((o) => o.logOffset);
    t.same(offsets, [...offsets].sort((a, b) => Number(a - b)), `partition ${partition} in log order`);
  }
  const byEvent = new Map(missed.map((d) => [d.eventId, d]));
  t.ok(handed.every((o) => {
    const key = byEvent.get(o.eventId)!.partitionKey;
    return key === null ? o.laneKey === undefined : o.laneKey === `j:rdj_test:${key}`;
  }), "a key's events share the job's lane of that key; an event without a key gets a lane of its own");
});

t.test('a cancelled job stops at its next batch; what it handed over stays handed over', async (t) => {
  const jobs = new FakeJobs(deliveries(300));
  const ends: string[] = [];
  let handed = 0;
  const runner = new RedeliveryJobRunner(jobs, async (orders) => {
    handed += orders.length;
    jobs.cancelled = true; // cancelled by another node while this batch was handed over
    return { gone: [] };
  }, createLogger('silent'), null, async (_job, end) => void ends.push(end.status));
  runner.start(job(300));
  await waitFor(() => ends.length > 0);
  t.same(ends, ['cancelled']);
  t.equal(handed, 100, 'one batch, then it stopped');
  t.equal(jobs.finished, null, 'the row was finished by the cancel, not by the runner');
});

t.test('cancel() on the node running the job resolves once the batch being handed over is finished, and the end counts it', async (t) => {
  const jobs = new FakeJobs(deliveries(300));
  const ends: Array<{ status: string; handedOver: number }> = [];
  let release = () => {};
  const held = new Promise<void>((resolve) => { release = resolve; });
  let batches = 0;
  const runner = new RedeliveryJobRunner(jobs, async (orders) => {
    // The second batch waits (as on a row lock) until released.
    if (++batches === 2) await held;
    return { gone: orders.slice(0, 0) };
  }, createLogger('silent'), null, async (_job, end) => void ends.push({ status: end.status, handedOver: end.handedOver }));
  runner.start(job(300));
  await waitFor(() => batches === 2);
  let stopped = false;
  const cancelled = runner.cancel('1').then(() => { stopped = true; });
  await new Promise((r) => setTimeout(r, 20));
  t.equal(stopped, false, 'still handing over its batch');
  release();
  await cancelled;
  t.same(ends, [{ status: 'cancelled', handedOver: 200 }], 'the batch in flight finished and was counted; no third');
  t.equal(batches, 2);
  t.equal(jobs.pages, 2, 'no further page was read');
  await runner.cancel('1'); // not running any more: resolves at once
});
