import t from 'tap';
import { answeredChannel, attemptChannel } from '../../../src/observability/channels.js';
import { createLogger } from '../../../src/observability/logger.js';
import type { RollupRepo } from '../../../src/stats/rollup-repo.js';
import type { RollupRow } from '../../../src/stats/rollup.js';
import { StatsRecorder } from '../../../src/stats/stats-recorder.js';

const T0 = Date.UTC(2026, 10, 27, 9, 0, 0);

function fakeRepo(fail = 0) {
  const writes: Array<{ minutes: RollupRow[]; tens: RollupRow[]; hours: RollupRow[] }> = [];
  let failing = fail;
  const repo = {
    async add([minutes, tens, hours]: RollupRow[][]) {
      if (failing-- > 0) throw new Error('database away');
      writes.push({ minutes: minutes!, tens: tens!, hours: hours! });
    },
  } as unknown as RollupRepo;
  return { repo, writes };
}

const attempt = (outcome: string, status: number | null, failureKind: string | null = null) => ({
  record: { tenantPublicId: 'ten_a', queueName: 'orders', receivedAt: T0 - 250 },
  outcome, status, failureKind,
});
const answer = (route: string, status: number, replayed = false) => ({
  route, status, ingress: { queue: { tenantPublicId: 'ten_a', queueName: 'orders' }, replayed },
});

t.test('counts what the channels carry and writes it in one batch per flush', async (t) => {
  const { repo, writes } = fakeRepo();
  const recorder = new StatsRecorder(repo, { flushMs: 60_000, ingress: true, delivery: true }, createLogger('silent'), () => T0);
  recorder.start();
  t.teardown(() => recorder.stop());
  answeredChannel.publish(answer('/events/:tenant/:queue', 202));
  answeredChannel.publish(answer('/events/:tenant/:queue', 202, true));
  answeredChannel.publish(answer('/events/sandbox/:tenant/:queue', 202));
  answeredChannel.publish(answer('/events/:tenant/:queue', 409));
  answeredChannel.publish(answer('/v1/tenants/:tenant', 200));
  attemptChannel.publish(attempt('delivered', 204));
  attemptChannel.publish(attempt('retry', 503));
  attemptChannel.publish(attempt('retry', null, 'timeout'));
  attemptChannel.publish(attempt('retry', null, 'refused-address'));
  attemptChannel.publish(attempt('failed', 302));
  await recorder.flush();
  t.equal(writes.length, 1);
  const [row] = writes[0]!.minutes;
  t.match(row, { tenant: 'ten_a', queue: 'orders', at: T0 / 1000 });
  // accepted, delivered, retrying, failed, 2xx, 3xx, 4xx, 5xx, timeout, network
  t.same(row!.counts, [1, 1, 3, 1, 1, 1, 0, 1, 1, 1], 'a replay, a sandbox event and a refusal are not accepted events');
  t.equal(row!.latency.reduce((a, b) => a + b, 0), 1, 'one latency: 250 ms');
  t.same(writes[0]!.tens.map((h) => h.counts), [row!.counts], 'the 10-minute row holds the same');
  t.same(writes[0]!.hours.map((h) => h.counts), [row!.counts], 'and the hour row');
  await recorder.flush();
  t.equal(writes.length, 1, 'nothing counted: nothing written');
});

t.test('a failed write keeps the counts for the next flush', async (t) => {
  const { repo, writes } = fakeRepo(1);
  const recorder = new StatsRecorder(repo, { flushMs: 60_000, ingress: true, delivery: false }, createLogger('silent'), () => T0);
  recorder.start();
  answeredChannel.publish(answer('/events/:tenant/:queue', 202));
  await recorder.flush();
  t.equal(writes.length, 0);
  answeredChannel.publish(answer('/events/:tenant/:queue', 202));
  attemptChannel.publish(attempt('delivered', 200));
  await recorder.stop();
  t.equal(writes.length, 1, 'stop writes what is left');
  t.same(writes[0]!.minutes[0]!.counts.slice(0, 2), [2, 0], 'both accepted events; the delivery role is not this process\'s');
  answeredChannel.publish(answer('/events/:tenant/:queue', 202));
  await recorder.flush();
  t.equal(writes.length, 1, 'stopped: no longer listening');
});
