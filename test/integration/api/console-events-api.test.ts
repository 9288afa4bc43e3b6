import t from 'tap';
import { bootstrap } from '../../../src/api/setup/bootstrap.js';
import { ApiClient } from '../../helpers/api-client.js';
import { freshBackends } from '../../helpers/backends.js';
import { testDatabase } from '../../helpers/delivery.js';
import { bootstrapDatabase, clientFor, startTestNode } from '../../helpers/nodes.js';
import { startReceiver } from '../../helpers/receiver.js';

/**
 * The console's event list of a queue and bulk redelivery (issue 14), with
 * real events: posted through ingress, delivered to a receiver that fails
 * some of them, listed from what delivery logged.
 */
const backends = await freshBackends(t);
const creds = await bootstrapDatabase(backends.databaseUrl);
const node = await startTestNode(t, backends);
const api = clientFor(node.port, creds);
const sql = await testDatabase(t, backends);
const other = new ApiClient(api.baseUrl, await bootstrap(sql, 'other@example.test'));

interface Item {
  eventId: string;
  receivedAt: string;
  eventType: string | null;
  partitionKey: string | null;
  targets: Array<{ target: string; status: string; attempts: number; lastAttemptAt: string | null; lastStatus: number | null }>;
}

const list = async (query = '', client = api) => client.manage('GET', client.tenantPath(`/queues/orders/events${query ? `?${query}` : ''}`));
const ids = (items: Item[]) => items.map((i) => i.eventId);

/** Every page of a query, following nextCursor. */
async function allPages(query: string, limit: number): Promise<{ items: Item[]; pages: number }> {
  const items: Item[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const res = await list(`${query}&limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`);
    if (res.status !== 200) throw new Error(`page ${pages}: ${res.status} ${JSON.stringify(res.body)}`);
    items.push(...res.body.items);
    cursor = res.body.nextCursor;
    pages++;
  } while (cursor !== null);
  return { items, pages };
}

// orders → good (always 200) and flaky (400 for events marked fail, until fixed).
const receiver = await startReceiver(t);
let fixed = false;
receiver.responder = (req, res) => {
  res.statusCode = req.path === '/flaky' && !fixed && req.body.toString().includes('"fail":true') ? 400 : 200;
  res.end();
};
await api.wire('orders', 'good', `${receiver.url}/good`);
await api.wire('orders', 'flaky', `${receiver.url}/flaky`);

const posted: Array<{ eventId: string; fail: boolean; type: string; key: string }> = [];
for (let i = 0; i < 12; i++) {
  const fail = i % 3 === 0;
  const type = i % 2 === 0 ? 'order.paid' : 'order.shipped';
  const key = `customer-${i % 4}`;
  const res = await api.postEvent('orders', JSON.stringify({ i, fail }), { 'x-service-event-type': type, 'x-service-partition-key': key });
  if (res.status !== 202) throw new Error(`post ${i}: ${res.status} ${JSON.stringify(res.body)}`);
  posted.push({ eventId: res.body.eventId, fail, type, key });
}
const failing = posted.filter((p) => p.fail).map((p) => p.eventId);

// Wait until delivery has logged a final status of every event on both targets.
let everything: Item[] = [];
for (const until = Date.now() + 60_000; ; await new Promise((r) => setTimeout(r, 200))) {
  const res = await list('limit=100');
  everything = res.body.items ?? [];
  const final = everything.length === 12 && everything.every((e) => e.targets.length === 2 && e.targets.every((d) => ['delivered', 'failed'].includes(d.status)));
  if (final) break;
  if (Date.now() > until) throw new Error(`events not delivered: ${JSON.stringify(res.body)}`);
}

t.test('the list: every event of the queue, newest first, with its per-target status', async (t) => {
  t.same(new Set(ids(everything)), new Set(posted.map((p) => p.eventId)));
  for (let i = 1; i < everything.length; i++) {
    const [a, b] = [everything[i - 1]!, everything[i]!];
    t.ok(a.receivedAt > b.receivedAt || (a.receivedAt === b.receivedAt && a.eventId > b.eventId), `item ${i} is older than item ${i - 1}`);
  }
  const first = everything.find((e) => e.eventId === failing[0])!;
  const p = posted.find((x) => x.eventId === first.eventId)!;
  t.match(first, { eventType: p.type, partitionKey: p.key });
  t.same(first.targets.map((d) => d.target), ['flaky', 'good'], 'targets by name');
  t.match(first.targets[0], { target: 'flaky', status: 'failed', attempts: 1, lastStatus: 400 });
  t.match(first.targets[1], { target: 'good', status: 'delivered', attempts: 1, lastStatus: 200 });
  t.ok(!Number.isNaN(Date.parse(first.targets[0]!.lastAttemptAt!)));
  const res = await list();
  t.equal(res.body.items.length, 12, 'default page of 50');
  t.equal(res.body.nextCursor, null);
});

t.test('pagination: an opaque cursor, pages that stay stable while new events arrive', async (t) => {
  const first = await list('limit=5');
  t.equal(first.body.items.length, 5);
  t.type(first.body.nextCursor, 'string');
  // An event arriving between pages is newer than the first page: the next pages do not shift.
  const late = await api.postEvent('orders', '{"late":true}');
  t.equal(late.status, 202);
  const second = await list(`limit=5&cursor=${first.body.nextCursor}`);
  const third = await list(`limit=5&cursor=${second.body.nextCursor}`);
  t.equal(third.body.items.length, 2);
  t.equal(third.body.nextCursor, null, 'the last page says so');
  t.same([...ids(first.body.items), ...ids(second.body.items), ...ids(third.body.items)], ids(everything), 'no event skipped or repeated');
  // Wait for the late event to show, so later tests see a settled queue.
  for (const until = Date.now() + 30_000; Date.now() < until; await new Promise((r) => setTimeout(r, 150))) {
    const top = await list('limit=1');
    if (top.body.items[0]?.eventId === late.body.eventId && top.body.items[0].targets.every((d: { status: string }) => d.status === 'delivered')) break;
  }
  const top = await list('limit=1');
  t.equal(top.body.items[0].eventId, late.body.eventId, 'the late event heads the list once delivery consumed it');
  posted.push({ eventId: late.body.eventId, fail: false, type: '', key: '' });
});

t.test('filters: status, target, time range, event type, partition key, and all of them together', async (t) => {
  const failedFlaky = await allPages('status=failed&target=flaky', 2);
  t.same(new Set(ids(failedFlaky.items)), new Set(failing), 'failed on flaky: exactly the failing events');
  t.equal(failedFlaky.pages, Math.ceil(failing.length / 2), 'filters paginate too');
  t.same(new Set(ids((await list('status=failed')).body.items)), new Set(failing), 'failed on any target');
  t.same((await list('status=failed&target=good')).body.items, [], 'nothing failed on good');
  t.equal((await list('status=delivered&target=good')).body.items.length, 13);
  t.equal((await list('status=delivered&target=flaky')).body.items.length, 13 - failing.length);
  t.same((await list('status=retrying')).body.items, []);
  t.same((await list('status=pending')).body.items, []);
  t.equal((await list('target=good')).body.items.length, 13);

  const paid = posted.filter((p) => p.type === 'order.paid').map((p) => p.eventId);
  t.same(new Set(ids((await list('eventType=order.paid')).body.items)), new Set(paid));
  const c1 = posted.filter((p) => p.key === 'customer-1').map((p) => p.eventId);
  t.same(new Set(ids((await list('partitionKey=customer-1')).body.items)), new Set(c1));
  const both = posted.filter((p) => p.fail && p.type === 'order.paid').map((p) => p.eventId);
  t.same(new Set(ids((await list('status=failed&target=flaky&eventType=order.paid')).body.items)), new Set(both), 'filters combine (AND)');
  t.same((await list('eventType=order.refunded')).body.items, []);

  // Time range: [from, to) on the received time.
  const oldestFirst = [...everything].reverse();
  const from = oldestFirst[4]!.receivedAt;
  const to = oldestFirst[8]!.receivedAt;
  const inRange = await list(`from=${from}&to=${to}`);
  const expected = oldestFirst.filter((e) => e.receivedAt >= from && e.receivedAt < to).map((e) => e.eventId);
  t.same(new Set(ids(inRange.body.items)), new Set(expected));
  t.ok(expected.length >= 1);
});

t.test('status filters for deliveries waiting for a retry and for a disabled target', async (t) => {
  const side = await startReceiver(t);
  side.responder = (req, res) => {
    res.statusCode = req.path === '/busy' ? 503 : 410;
    res.end();
  };
  const listOf = (queue: string, query: string) => api.manage('GET', api.tenantPath(`/queues/${queue}/events?${query}`));
  // 503 with a retry a minute away: retrying meanwhile.
  await api.wire('slow', 'busy', `${side.url}/busy`, {}, { retryPolicy: { scheduleSeconds: [60], horizonSeconds: 3600 } });
  const slow = await api.postEvent('slow', '{}');
  // 410 disables the target: the next event routed to it is blocked.
  await api.wire('gated', 'gone', `${side.url}/gone`);
  const first = await api.postEvent('gated', '{"n":1}');
  let retrying: Item[] = [];
  let failed: Item[] = [];
  for (const until = Date.now() + 30_000; Date.now() < until; await new Promise((r) => setTimeout(r, 150))) {
    retrying = (await listOf('slow', 'status=retrying')).body.items;
    failed = (await listOf('gated', 'status=failed&target=gone')).body.items;
    if (retrying.length === 1 && failed.length === 1) break;
  }
  t.same(ids(retrying), [slow.body.eventId]);
  t.match(retrying[0]!.targets, [{ target: 'busy', status: 'retrying', attempts: 1, lastStatus: 503 }]);
  t.same(ids(failed), [first.body.eventId]);
  t.same((await listOf('slow', 'status=delivered')).body.items, []);

  const second = await api.postEvent('gated', '{"n":2}');
  let blocked: Item[] = [];
  for (const until = Date.now() + 30_000; Date.now() < until; await new Promise((r) => setTimeout(r, 150))) {
    blocked = (await listOf('gated', 'status=blocked')).body.items;
    if (blocked.length === 1) break;
  }
  t.same(ids(blocked), [second.body.eventId]);
  t.match(blocked[0]!.targets, [{ target: 'gone', status: 'blocked', attempts: 0, lastAttemptAt: null, lastStatus: null }]);
  t.equal(side.requests.filter((r) => r.path === '/gone').length, 1, 'nothing was sent to the disabled target');
});

t.test('bad input gets validation_failed naming the parameter; unknown or foreign names get 404', async (t) => {
  for (const [query, field] of [
    ['status=lost', 'status'], ['limit=0', 'limit'], ['limit=101', 'limit'], ['from=yesterday', 'from'],
    ['cursor=bogus', 'cursor'], ['sort=asc', 'sort'], ['from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z', 'to'],
  ] as const) {
    const res = await list(query);
    t.equal(res.status, 400, query);
    t.equal(res.body.error.code, 'validation_failed');
    t.match(res.body.error.details, [{ field }]);
  }
  const unknownTarget = await list('target=nope');
  t.equal(unknownTarget.status, 404);
  t.equal(unknownTarget.body.error.code, 'not_found');
  const unknownQueue = await api.manage('GET', api.tenantPath('/queues/nope/events'));
  t.equal(unknownQueue.status, 404);
  const foreign = await other.manage('GET', api.tenantPath('/queues/orders/events'));
  t.equal(foreign.status, 404, "another tenant's workspace");
  const theirs = await other.manage('GET', other.tenantPath('/queues/orders/events'));
  t.equal(theirs.status, 404, 'their workspace has no such queue');
  const none = await api.request('GET', api.tenantPath('/queues/orders/events'));
  t.equal(none.status, 401);
});

t.test('bulk redelivery: a dry-run count, then a job that redelivers exactly the failed deliveries', async (t) => {
  const from = new Date(Date.now() - 3_600_000).toISOString();
  const to = new Date(Date.now() + 60_000).toISOString();
  const path = api.tenantPath('/targets/flaky/redeliveries');
  const dry = await api.manage('POST', path, { from, to, dryRun: true });
  t.equal(dry.status, 200);
  t.equal(dry.body.count, failing.length);
  t.equal((await api.manage('POST', api.tenantPath('/targets/good/redeliveries'), { from, to, dryRun: true })).body.count, 0);
  t.equal((await api.manage('POST', path, { from: new Date(Date.now() - 7_200_000).toISOString(), to: from, dryRun: true })).body.count, 0, 'a range before the events');

  fixed = true;
  const before = receiver.requests.length;
  const started = await api.manage('POST', path, { from, to });
  t.equal(started.status, 202);
  t.match(started.body, { jobId: /^rdj_/, status: 'running', total: failing.length });

  let job: any;
  for (const until = Date.now() + 30_000; Date.now() < until; await new Promise((r) => setTimeout(r, 100))) {
    const res = await api.manage('GET', api.tenantPath(`/redelivery-jobs/${started.body.jobId}`));
    t.equal(res.status, 200);
    job = res.body;
    if (job.status !== 'running') break;
  }
  t.match(job, { jobId: started.body.jobId, status: 'done', total: failing.length, done: failing.length, failed: 0, from, to });
  t.ok(!Number.isNaN(Date.parse(job.finishedAt)) && !Number.isNaN(Date.parse(job.createdAt)));

  await receiver.waitFor(
    (rs) => failing.every((id) => rs.slice(before).some((r) => r.path === '/flaky' && r.headers['x-service-event-id'] === id)),
    30_000, 'every failed event to reach flaky again',
  );
  // Give a wrongly redelivered event time to show up too, then check nothing else came.
  await new Promise((r) => setTimeout(r, 1_500));
  const again = receiver.requests.slice(before);
  t.same(again.map((r) => r.path).filter((p) => p !== '/flaky'), [], 'nothing went to good');
  t.same(again.map((r) => String(r.headers['x-service-event-id'])).sort(), [...failing].sort(), 'each failed delivery once, nothing else');

  for (const until = Date.now() + 30_000; Date.now() < until; await new Promise((r) => setTimeout(r, 150))) {
    if ((await list('status=failed')).body.items.length === 0) break;
  }
  t.same((await list('status=failed')).body.items, [], 'the list shows them delivered');
  t.equal((await list('status=delivered&target=flaky')).body.items.length, posted.length);
  const dryAfter = await api.manage('POST', path, { from, to, dryRun: true });
  t.equal(dryAfter.body.count, 0, 'nothing left to redeliver');
});

t.test('bulk redelivery refuses absurd ranges and foreign ids with the catalog codes', async (t) => {
  const path = api.tenantPath('/targets/flaky/redeliveries');
  const now = Date.now();
  const iso = (ms: number) => new Date(ms).toISOString();
  for (const [body, field] of [
    [{ from: iso(now), to: iso(now - 1000) }, 'to'],
    [{ from: iso(now - 400 * 86_400_000), to: iso(now) }, 'to'],
    [{ from: iso(now + 86_400_000), to: iso(now + 2 * 86_400_000) }, 'from'],
    [{ to: iso(now) }, 'from'],
    [{ from: 'last week', to: iso(now) }, 'from'],
    [{ from: iso(now - 1000), to: iso(now), dryRun: 'yes' }, 'dryRun'],
    [{ from: iso(now - 1000), to: iso(now), target: 'good' }, 'target'],
  ] as const) {
    const res = await api.manage('POST', path, body);
    t.equal(res.status, 400, JSON.stringify(body));
    t.equal(res.body.error.code, 'validation_failed');
    t.match(res.body.error.details, [{ field }]);
  }
  const range = { from: iso(now - 60_000), to: iso(now) };
  const unknown = await api.manage('POST', api.tenantPath('/targets/nope/redeliveries'), range);
  t.equal(unknown.status, 404);
  const foreign = await other.manage('POST', path, range);
  t.equal(foreign.status, 404, "another tenant's target, on our workspace");
  const theirs = await other.manage('POST', other.tenantPath('/targets/flaky/redeliveries'), range);
  t.equal(theirs.status, 404, 'our target name, on their workspace');
  const member = await api.request('POST', path, { body: range, headers: { 'x-api-key': creds.ingressKey, 'x-license-publicid': creds.licensePublicId } });
  t.equal(member.status, 403);
  t.equal(member.body.error.code, 'missing_permission');

  const job = await api.manage('POST', path, range);
  t.equal(job.status, 202);
  const foreignJob = await other.manage('GET', other.tenantPath(`/redelivery-jobs/${job.body.jobId}`));
  t.equal(foreignJob.status, 404, "another tenant cannot poll our job");
  const unknownJob = await api.manage('GET', api.tenantPath('/redelivery-jobs/rdj_nope'));
  t.equal(unknownJob.status, 404);
});

t.test('a job whose node went away reports failed to any node that is asked', async (t) => {
  // What a node that dies leaves behind: a running job whose heartbeat stopped.
  const [target] = await sql<{ id: string; workspaceId: string }[]>`
    SELECT t.id::text, t.workspace_id::text AS "workspaceId" FROM targets t JOIN workspaces w ON w.id = t.workspace_id
    WHERE w.public_id = ${creds.tenantPublicId} AND t.name = 'good'`;
  await sql`
    INSERT INTO redelivery_jobs (public_id, workspace_id, target_id, from_at, to_at, cutoff_at, status, total, heartbeat_at, created_at)
    VALUES ('rdj_orphaned000000000000', ${target!.workspaceId}, ${target!.id}, now() - interval '1 hour', now(), now() - interval '10 minutes',
            'running', 5, now() - interval '5 minutes', now() - interval '10 minutes')`;
  const res = await api.manage('GET', api.tenantPath('/redelivery-jobs/rdj_orphaned000000000000'));
  t.equal(res.status, 200);
  t.match(res.body, { status: 'failed', total: 5, done: 0, error: /stopped/ });
  t.type(res.body.finishedAt, 'string');
  // The target is free for a new job.
  const next = await api.manage('POST', api.tenantPath('/targets/good/redeliveries'), { from: new Date(Date.now() - 60_000).toISOString(), to: new Date().toISOString() });
  t.equal(next.status, 202);
});
