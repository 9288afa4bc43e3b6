import t from 'tap';
import { freshBackends } from '../../helpers/backends.js';
import { bootstrapDatabase, clientFor, startTestNode } from '../../helpers/nodes.js';
import { startReceiver, type Receiver } from '../../helpers/receiver.js';
import { sleep, waitForEvent } from '../../helpers/delivery.js';

const backends = await freshBackends(t);
const creds = await bootstrapDatabase(backends.databaseUrl);
const node = await startTestNode(t, backends);
const api = clientFor(node.port, creds);

/** Arrival times (ms) of the requests for one event. */
const arrivals = (receiver: Receiver, eventId: string) => receiver.requests.filter((r) => r.headers['x-service-event-id'] === eventId).map((r) => r.at);

t.test('retries follow the target\'s schedule with ±20 % jitter, parked between attempts, then deliver', async (t) => {
  const receiver = await startReceiver(t);
  let failures = 4;
  receiver.responder = (_req, res) => {
    res.statusCode = failures-- > 0 ? 503 : 200;
    res.end();
  };
  await api.wire('schedule', 'schedule-target', `${receiver.url}/s`, {}, { retryPolicy: { scheduleSeconds: [1, 2, 3], horizonSeconds: 60 } });
  const posted = await api.postEvent('schedule', '{}', { 'x-service-partition-key': 'k' });
  await receiver.waitFor((r) => r.length >= 5, 40_000, 'five attempts');
  const at = arrivals(receiver, posted.body.eventId);
  const gaps = at.slice(1).map((x, i) => (x - at[i]!) / 1000);
  t.comment(`gaps between attempts (s): ${gaps.map((g) => g.toFixed(2)).join(', ')}`);
  // 1 s, 2 s, 3 s, then the last step repeats.
  [1, 2, 3, 3].forEach((step, i) => {
    t.ok(gaps[i]! >= step * 0.8 - 0.05 && gaps[i]! <= step * 1.2 + 0.8, `retry ${i + 1} after ${gaps[i]!.toFixed(2)} s (schedule ${step} s ± 20 %)`);
  });
  const event = await waitForEvent(api, posted.body.eventId, (e) => e.deliveries[0]?.status === 'delivered');
  t.same(event.deliveries[0].attempts.map((a: { status: number }) => a.status), [503, 503, 503, 503, 200]);
});

t.test('3xx is a failure, never followed, and retried', async (t) => {
  const receiver = await startReceiver(t);
  let redirects = 2;
  receiver.responder = (_req, res) => {
    if (redirects-- > 0) {
      res.writeHead(302, { location: `${receiver.url}/elsewhere` });
      return void res.end();
    }
    res.end('ok');
  };
  await api.wire('redirect', 'redirect-target', `${receiver.url}/here`);
  const posted = await api.postEvent('redirect', '{}');
  const event = await waitForEvent(api, posted.body.eventId, (e) => e.deliveries[0]?.status === 'delivered');
  t.same(receiver.requests.map((r) => r.path), ['/here', '/here', '/here'], 'the Location was never requested');
  t.match(event.deliveries[0].attempts[0], { status: 302, error: /redirect 302 not followed/ });
});

t.test('429 with Retry-After waits as long as the receiver asks', async (t) => {
  const receiver = await startReceiver(t);
  let first = true;
  receiver.responder = (_req, res) => {
    if (first) {
      first = false;
      res.writeHead(429, { 'retry-after': '3' });
      return void res.end();
    }
    res.end();
  };
  await api.wire('throttled', 'throttled-target', `${receiver.url}/t`);
  const posted = await api.postEvent('throttled', '{}');
  await receiver.waitFor((r) => r.length >= 2, 30_000, 'the retry');
  const [a, b] = arrivals(receiver, posted.body.eventId);
  const gap = (b! - a!) / 1000;
  t.ok(gap >= 2.95 && gap < 4.5, `retried after ${gap.toFixed(2)} s: Retry-After 3 s beats the 1 s schedule`);
});

t.test('a receiver that never answers and one that drips its response both end at the deadline', async (t) => {
  const receiver = await startReceiver(t);
  const closedAfter: number[] = [];
  receiver.responder = (req, res) => {
    res.on('close', () => closedAfter.push(Date.now() - req.at));
    if (req.path === '/silent') return; // never answers
    res.writeHead(200, { 'content-type': 'text/plain' });
    const drip = setInterval(() => res.write('.'), 100);
    res.on('close', () => clearInterval(drip));
  };
  // Attempt 2 is due at most deadline + 1.2 s after attempt 1 began (≤ 1.7 s): inside the 2 s
  // horizon; attempt 3 at least 2 × (deadline + 0.8 s) (≥ 2.4 s): outside it.
  await api.wire('silent', 'silent-target', `${receiver.url}/silent`, {}, { timeoutMs: 400, retryPolicy: { scheduleSeconds: [1], horizonSeconds: 2 } });
  await api.wire('drip', 'drip-target', `${receiver.url}/drip`, {}, { timeoutMs: 500, retryPolicy: { scheduleSeconds: [1], horizonSeconds: 2 } });
  const silent = await api.postEvent('silent', '{}');
  const drip = await api.postEvent('drip', '{}');
  const silentEvent = await waitForEvent(api, silent.body.eventId, (e) => e.deliveries[0]?.status === 'failed');
  const dripEvent = await waitForEvent(api, drip.body.eventId, (e) => e.deliveries[0]?.status === 'failed');
  for (const [event, deadline] of [[silentEvent, 400], [dripEvent, 500]] as const) {
    const attempts = event.deliveries[0].attempts;
    t.equal(attempts.length, 2, 'attempted, retried once within the 2 s horizon, then failed');
    for (const a of attempts) {
      t.equal(a.status, null, 'no answer counts as no status');
      t.match(a.error, new RegExp(`no complete response within ${deadline} ms`));
      t.ok(a.durationMs >= deadline - 20 && a.durationMs < deadline + 500, `attempt took ${a.durationMs} ms for a ${deadline} ms deadline`);
    }
  }
  await sleep(200);
  t.equal(closedAfter.length, 4, 'every connection was closed by the service');
  t.ok(closedAfter.every((ms) => ms < 1_400), `connections closed after ${closedAfter.join(', ')} ms`);
});

t.test('a huge response is read only up to 64 KiB', async (t) => {
  const receiver = await startReceiver(t);
  let bytesWritten = 0;
  receiver.responder = (_req, res) => {
    res.writeHead(200);
    // 64 MB in 64 KiB chunks, as fast as the socket takes them; stops when cut off.
    const chunk = Buffer.alloc(65_536, 'x');
    const pump = () => {
      while (bytesWritten < 64 * 1024 * 1024 && !res.destroyed) {
        bytesWritten += chunk.length;
        if (!res.write(chunk)) return void res.once('drain', pump);
      }
      res.end();
    };
    pump();
  };
  await api.wire('huge', 'huge-target', `${receiver.url}/huge`);
  const posted = await api.postEvent('huge', '{}');
  const event = await waitForEvent(api, posted.body.eventId, (e) => e.deliveries[0]?.status === 'delivered');
  t.equal(event.deliveries[0].attempts.length, 1);
  await sleep(300);
  t.ok(bytesWritten < 16 * 1024 * 1024, `the service hung up after ${Math.round(bytesWritten / 1024)} KiB of a 64 MiB answer`);
});

t.test('other 4xx fail at once unless the target lists them as retryable', async (t) => {
  const receiver = await startReceiver(t);
  let badRequests = 1;
  receiver.responder = (_req, res) => {
    res.statusCode = badRequests-- > 0 ? 400 : 200;
    res.end();
  };
  await api.wire('strict', 'strict-target', `${receiver.url}/strict`);
  const strict = await api.postEvent('strict', '{}');
  const failed = await waitForEvent(api, strict.body.eventId, (e) => e.deliveries[0]?.status === 'failed');
  t.same(failed.deliveries[0].attempts.map((a: { status: number }) => a.status), [400], 'one attempt, failed at once');

  badRequests = 1;
  await api.wire('lenient', 'lenient-target', `${receiver.url}/lenient`, {}, { retryPolicy: { scheduleSeconds: [1], horizonSeconds: 60, retryableStatuses: [400] } });
  const lenient = await api.postEvent('lenient', '{}');
  const delivered = await waitForEvent(api, lenient.body.eventId, (e) => e.deliveries[0]?.status === 'delivered');
  t.same(delivered.deliveries[0].attempts.map((a: { status: number }) => a.status), [400, 200], 'retried because the policy lists 400');
});

t.test('410 Gone fails the delivery and disables the target with a visible reason; saving it again re-enables it', async (t) => {
  const receiver = await startReceiver(t);
  receiver.responder = (_req, res) => {
    res.statusCode = 410;
    setTimeout(() => res.end(), 300);
  };
  await api.wire('gone', 'gone-target', `${receiver.url}/gone`);
  // Three of one key: the second and third wait in the lane while the first is answered.
  const first = await api.postEvent('gone', '{"n":1}', { 'x-service-partition-key': 'same' });
  const queued = [await api.postEvent('gone', '{"n":1.1}', { 'x-service-partition-key': 'same' }), await api.postEvent('gone', '{"n":1.2}', { 'x-service-partition-key': 'same' })];
  const failed = await waitForEvent(api, first.body.eventId, (e) => e.deliveries[0]?.status === 'failed');
  t.equal(failed.deliveries[0].attempts.length, 1, '410 is not retried');
  for (const q of queued) await waitForEvent(api, q.body.eventId, (e) => e.deliveries[0]?.status === 'blocked');
  t.equal(receiver.requests.length, 1, 'the events queued behind it were not sent');
  const target = await api.manage('GET', api.tenantPath('/targets/gone-target'));
  t.equal(target.body.disabled, true);
  t.match(target.body.disabledReason, /410 Gone/);

  await sleep(300);
  const second = await api.postEvent('gone', '{"n":2}');
  const blocked = await waitForEvent(api, second.body.eventId, (e) => e.deliveries[0]?.status === 'blocked');
  t.same(blocked.deliveries[0].attempts, [], 'nothing sent to a disabled target');
  t.equal(receiver.requests.length, 1);

  receiver.responder = (_req, res) => res.end();
  const saved = await api.manage('PUT', api.tenantPath('/targets/gone-target'), { url: `${receiver.url}/gone` });
  t.equal(saved.headers.get('x-streamgate-change'), 'changed', 'the same configuration saved again re-enables it');
  t.equal(saved.body.disabled, false);
  t.equal(saved.body.disabledReason, null);
  await sleep(300);
  const third = await api.postEvent('gone', '{"n":3}');
  await waitForEvent(api, third.body.eventId, (e) => e.deliveries[0]?.status === 'delivered');
});

t.test('dead letter after the horizon, then POST …/redeliver sends it again with the same event id', async (t) => {
  const receiver = await startReceiver(t);
  const other = await startReceiver(t);
  receiver.responder = (_req, res) => {
    res.statusCode = 500;
    res.end();
  };
  await api.wire('dlq', 'dlq-target', `${receiver.url}/dlq`, {}, { retryPolicy: { scheduleSeconds: [1], horizonSeconds: 2 } });
  await api.wire('dlq', 'dlq-other', `${other.url}/other`);
  await api.manage('PUT', api.tenantPath('/targets/unrouted'), { url: `${other.url}/unrouted` });
  const posted = await api.postEvent('dlq', '{"precious":true}', { 'idempotency-key': 'idem-dlq' });
  const of = (e: { deliveries: Array<{ target: string }> }, name: string): any => e.deliveries.find((d) => d.target === name);
  const dead = await waitForEvent(api, posted.body.eventId, (e) => of(e, 'dlq-target')?.status === 'failed', 30_000);
  t.equal(of(dead, 'dlq-other').status, 'delivered', 'the other target of the queue was served meanwhile');
  const attempts = of(dead, 'dlq-target').attempts;
  t.ok(attempts.length >= 2 && attempts.length <= 3, `${attempts.length} attempts within the 2 s horizon`);
  t.match(attempts[attempts.length - 1].error, /no retry left within the 2 s horizon/);

  receiver.responder = (_req, res) => res.end();
  const before = receiver.requests.length;
  const redeliver = await api.manage('POST', api.tenantPath(`/events/${posted.body.eventId}/redeliver`), { target: 'dlq-target' });
  t.equal(redeliver.status, 202);
  t.match(redeliver.body, { eventId: posted.body.eventId, targets: [{ target: 'dlq-target', status: 'pending' }] });
  const redelivered = await waitForEvent(api, posted.body.eventId, (e) => of(e, 'dlq-target')?.status === 'delivered');
  t.equal(of(redelivered, 'dlq-target').attempts.length, attempts.length + 1, 'the new attempt is added to the history');
  const again = receiver.requests.slice(before);
  t.equal(again.length, 1);
  t.equal(again[0]!.headers['x-service-event-id'], posted.body.eventId, 'same X-Service-Event-Id');
  t.equal(again[0]!.headers['idempotency-key'], 'idem-dlq');
  t.equal(again[0]!.body.toString(), '{"precious":true}', 'same body');

  t.equal(other.requests.length, 1, 'a redelivery to one target leaves the others alone');

  // Without a target: every target the event was routed to.
  const all = await api.manage('POST', api.tenantPath(`/events/${posted.body.eventId}/redeliver`));
  t.equal(all.status, 202);
  t.same(all.body.targets.map((x: { target: string }) => x.target).sort(), ['dlq-other', 'dlq-target']);
  await other.waitFor((r) => r.length >= 2, 30_000, 'the redelivery to the other target');
  await receiver.waitFor((r) => r.length >= before + 2, 30_000, 'the second redelivery');
  t.equal(other.requests[1]!.headers['x-service-event-id'], posted.body.eventId);

  const unrouted = await api.manage('POST', api.tenantPath(`/events/${posted.body.eventId}/redeliver`), { target: 'unrouted' });
  t.equal(unrouted.status, 409, 'a target the event was never routed to is refused');
  t.equal(unrouted.body.error.code, 'conflict');

  const unknownTarget = await api.manage('POST', api.tenantPath(`/events/${posted.body.eventId}/redeliver`), { target: 'nope' });
  t.equal(unknownTarget.status, 404);
  t.equal(unknownTarget.body.error.code, 'not_found');
  const unknownEvent = await api.manage('POST', api.tenantPath('/events/evt_doesnotexist00000000000/redeliver'), {});
  t.equal(unknownEvent.status, 404);
  const badBody = await api.manage('POST', api.tenantPath(`/events/${posted.body.eventId}/redeliver`), { target: 5, extra: 1 });
  t.equal(badBody.status, 400);
  t.equal(badBody.body.error.code, 'validation_failed');
  t.same(badBody.body.error.details.map((d: { field: string }) => d.field).sort(), ['extra', 'target']);
});
