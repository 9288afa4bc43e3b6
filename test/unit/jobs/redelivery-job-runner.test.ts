import t from 'tap';
import { RedeliveryJobRunner } from '../../../src/jobs/redelivery-job-runner.js';
import type { RedeliveryOrder } from '../../../src/api/events/redeliver.js';
import { createLogger } from '../../../src/observability/logger.js';
import type { FailedDelivery, RedeliveryJobRow } from '../../../src/storage/redelivery-job-repo.js';

/** The job table and the failed deliveries, in memory: what the runner reads and writes. */
class FakeJobs {
  progressed = { done: 0, failed: 0 };
  finished: { status: string; error: string | null } | null = null;
  pages = 0;
  /** Resolves the next page only when released (to stop a job mid-way). */
  gate: Promise<void> | null = null;

  constructor(private readonly failed: FailedDelivery[], private readonly pageSize = 100) {}

  async nextFailed(_r: unknown, after: { receivedAt: string; eventId: string } | null, limit: number): Promise<FailedDelivery[]> {
    if (this.gate) await this.gate;
    this.pages++;
    const start = after ? this.failed.findIndex((d) => d.eventId === after.eventId) + 1 : 0;
    return this.failed.slice(start, start + Math.min(limit, this.pageSize));
  }
  async progress(_id: string, done: number, failed: number): Promise<void> {
    this.progressed.done += done;
    this.progressed.failed += failed;
  }
  async heartbeat(): Promise<void> {}
  async finish(_id: string, status: 'done' | 'failed', error: string | null = null): Promise<void> {
    this.finished ??= { status, error };
  }
}

const deliveries = (n: number): FailedDelivery[] =>
  Array.from({ length: n }, (_, i) => ({ eventId: `evt_${String(i).padStart(24, '0')}`, receivedAt: `2026-01-01T00:00:${String(i % 60).padStart(2, '0')}.000000Z`, logPartition: i % 4, logOffset: BigInt(i) }));

const job = (total: number): RedeliveryJobRow => ({
  id: '1', publicId: 'rdj_test', workspaceId: '1', targetId: '7', from: new Date(0), to: new Date(), cutoff: '2026-01-01T00:00:00.000000Z',
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
