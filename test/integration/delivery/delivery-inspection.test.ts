import t from 'tap';
import { newEventId } from '../../../src/ids.js';
import { freshBackends } from '../../helpers/backends.js';
import { bootstrapDatabase, clientFor, startTestNode } from '../../helpers/nodes.js';
import { startReceiver } from '../../helpers/receiver.js';
import { appendRecords, makeRecord, putQueueSettings, testDatabase, waitForEvent } from '../../helpers/delivery.js';

const backends = await freshBackends(t);
const creds = await bootstrapDatabase(backends.databaseUrl);
const node = await startTestNode(t, backends);
const api = clientFor(node.port, creds);
const sql = await testDatabase(t, backends);

t.test('GET …/events/{id}: the event, its deliveries per target and every attempt', async (t) => {
  const receiver = await startReceiver(t);
  let failFirst = true;
  receiver.responder = (req, res) => {
    if (req.path === '/flaky' && failFirst) {
      failFirst = false;
      res.statusCode = 502;
      return void res.end();
    }
    res.end();
  };
  await api.wire('inspect', 'inspect-flaky', `${receiver.url}/flaky`);
  await api.wire('inspect', 'inspect-steady', `${receiver.url}/steady`);
  const posted = await api.postEvent('inspect', '{"a":1}', {
    'x-service-event-type': 'order.paid',
    'x-service-group-key': 'tenant-9',
    'x-service-partition-key': 'order-77',
    'idempotency-key': 'idem-inspect',
  });
  const event = await waitForEvent(api, posted.body.eventId, (e) => e.deliveries.length === 2 && e.deliveries.every((d: { status: string }) => d.status === 'delivered'));
  t.match(event, {
    eventId: posted.body.eventId,
    tenantPublicId: creds.tenantPublicId,
    queue: 'inspect',
    eventType: 'order.paid',
    groupKey: 'tenant-9',
    partitionKey: 'order-77',
    idempotencyKey: 'idem-inspect',
  });
  t.ok(Math.abs(Date.parse(event.receivedAt) - Date.now()) < 60_000, 'receivedAt is an ISO time of now');
  const flaky = event.deliveries.find((d: { target: string }) => d.target === 'inspect-flaky');
  const steady = event.deliveries.find((d: { target: string }) => d.target === 'inspect-steady');
  t.match(flaky.targetPublicId, /^tgt_/);
  t.equal(flaky.attempts.length, 2);
  t.match(flaky.attempts[0], { status: 502, error: /receiver answered 502/ });
  t.match(flaky.attempts[1], { status: 200, error: null });
  for (const a of flaky.attempts) {
    t.ok(!Number.isNaN(Date.parse(a.at)), 'at is a timestamp');
    t.type(a.durationMs, 'number');
  }
  t.equal(steady.attempts.length, 1);
  // The event page's content, read back from the log: headers kept with the event, and the body.
  t.equal(event.retained, true);
  t.equal(Buffer.from(event.bodyBase64, 'base64').toString(), '{"a":1}', 'the body as posted');
  t.equal(event.bodyBytes, 7);
  t.same(
    (event.headers as Array<[string, string]>).filter(([name]) => ['x-service-event-type', 'idempotency-key'].includes(name)),
    [['x-service-event-type', 'order.paid'], ['idempotency-key', 'idem-inspect']],
    'the headers delivery sends on',
  );
  t.notMatch(JSON.stringify(event.headers), /x-api-key|qak_/i, 'never the credential');

  const missing = await api.manage('GET', api.tenantPath('/events/evt_unknown0000000000000000'));
  t.equal(missing.status, 404);
  t.equal(missing.body.error.code, 'not_found');
  const noKey = await api.request('GET', api.tenantPath(`/events/${posted.body.eventId}`));
  t.equal(noKey.status, 401, 'inspection needs management credentials');
});

t.test('GET right after the 202 finds the event without polling; an unknown id minted moments ago is 404 after a bounded wait', async (t) => {
  const receiver = await startReceiver(t);
  await api.wire('fresh', 'fresh-target', `${receiver.url}/fresh`);
  for (let i = 0; i < 5; i++) {
    const posted = await api.postEvent('fresh', `{"i":${i}}`);
    t.equal(posted.status, 202);
    const got = await api.manage('GET', api.tenantPath(`/events/${posted.body.eventId}`));
    t.equal(got.status, 200, `event ${i}, asked at once: ${JSON.stringify(got.body)}`);
    t.equal(got.body.eventId, posted.body.eventId);
    t.match(got.body.deliveries, [{ target: 'fresh-target', status: /^(pending|delivered)$/ }]);
  }
  // Ids of the right shape and time that were never posted: looked for, then 404.
  for (const [label, at] of [['minted now', Date.now()], ['minted a minute ago', Date.now() - 60_000]] as const) {
    const started = Date.now();
    const forged = await api.manage('GET', api.tenantPath(`/events/${newEventId(at)}`));
    t.equal(forged.status, 404, label);
    t.equal(forged.body.error.code, 'not_found');
    t.ok(Date.now() - started < 20_000, `${label}: answered after ${Date.now() - started} ms`);
  }
  const started = Date.now();
  const timeless = await api.manage('GET', api.tenantPath('/events/evt_unknown0000000000000000'));
  t.equal(timeless.status, 404);
  t.ok(Date.now() - started < 1_000, `an id without a time is answered at once (${Date.now() - started} ms)`);
});

t.test('a failing delivery shows as retrying while it waits', async (t) => {
  const receiver = await startReceiver(t);
  receiver.responder = (_req, res) => {
    res.statusCode = 503;
    res.end();
  };
  await api.wire('waiting', 'waiting-target', `${receiver.url}/w`, {}, { retryPolicy: { scheduleSeconds: [60], horizonSeconds: 3600 } });
  const posted = await api.postEvent('waiting', '{}');
  const event = await waitForEvent(api, posted.body.eventId, (e) => e.deliveries[0]?.status === 'retrying');
  t.match(event.deliveries[0].attempts, [{ status: 503 }]);
});

t.test('sandbox runs: simulated attempts driven by sb_fail_code / sb_fail_count, nothing leaves the service', async (t) => {
  const receiver = await startReceiver(t);
  await api.wire('sandboxed', 'sandbox-target', `${receiver.url}/never`);
  const queue = await putQueueSettings(sql, backends, creds.tenantPublicId, 'sandboxed', {});
  const runId = 'run_demo_0001';
  const records = [
    // sb_fail_count=2 alone: 500, 500, then success
    makeRecord(queue, { sandbox: { failCode: null, failCount: 2, runId }, receivedAt: Date.now() - 3 }),
    // sb_fail_code=404: not retryable, failed at once
    makeRecord(queue, { sandbox: { failCode: 404, failCount: 1, runId }, receivedAt: Date.now() - 2 }),
    // sb_fail_code=503 with sb_fail_count=1: one 503, then success
    makeRecord(queue, { sandbox: { failCode: 503, failCount: 1, runId }, receivedAt: Date.now() - 1 }),
    // another run
    makeRecord(queue, { sandbox: { failCode: null, failCount: 0, runId: 'run_other' } }),
  ];
  await appendRecords(t, backends, records);
  const until = Date.now() + 30_000;
  let run: any;
  for (;;) {
    const res = await api.manage('GET', api.tenantPath(`/sandbox/runs/${runId}`));
    run = res.body;
    const final = (e: any) => ['delivered', 'failed'].includes(e.deliveries[0]?.status);
    if (res.status === 200 && run.events.length === 3 && run.events.every(final)) break;
    if (Date.now() > until) throw new Error(`run not finished: ${JSON.stringify(run)}`);
    await new Promise((r) => setTimeout(r, 150));
  }
  t.equal(run.runId, runId);
  t.same(run.events.map((e: { eventId: string }) => e.eventId), records.slice(0, 3).map((r) => r.id), 'the run\'s events, in order received');
  const statuses = run.events.map((e: any) => e.deliveries[0].attempts.map((a: { status: number }) => a.status));
  t.same(statuses, [[500, 500, 200], [404], [503, 200]]);
  t.same(run.events.map((e: any) => e.deliveries[0].status), ['delivered', 'failed', 'delivered']);
  t.ok(run.events.every((e: any) => e.sandbox.runId === runId && e.deliveries[0].attempts.every((a: { simulated: boolean }) => a.simulated === true)));
  t.equal(receiver.requests.length, 0, 'nothing was sent to the target');

  const unknown = await api.manage('GET', api.tenantPath('/sandbox/runs/run_nope'));
  t.equal(unknown.status, 404);
});
