import type { Test } from 'tap';
import type { EventRecord } from '../../src/event-log/event-record.js';
import { loadConfig } from '../../src/config/load-config.js';
import { newId } from '../../src/ids.js';
import { connectDatabase, type Sql } from '../../src/storage/db.js';
import { TopologyRepo } from '../../src/storage/topology-repo.js';
import type { QueueSettings } from '../../src/routing/queue-settings.js';
import type { TargetSettings } from '../../src/routing/target-settings.js';
import type { ApiClient } from './api-client.js';
import { startReceiver, type Received } from './receiver.js';
import { InvalidationBus } from '../../src/cache/invalidation-bus.js';
import { backendConfig, testCache, testLogWriter, type Backends } from './backends.js';

/**
 * Helpers for delivery tests that need what the public API of this branch
 * cannot set yet (queue signing settings, records carrying mapped headers or
 * a sandbox marker, which ingress fills): they write the database or append
 * to the event log directly, the way the other components would.
 */
export async function testDatabase(t: Test, backends: Backends): Promise<Sql> {
  const sql = connectDatabase(backends.databaseUrl, 2);
  t.teardown(() => sql.end({ timeout: 5 }));
  return sql;
}

export interface QueueRef {
  tenantPublicId: string;
  workspaceId: string;
  queueId: string;
  queueName: string;
}

/**
 * Writes a queue's settings straight into its row (bypassing the API's
 * validation), tells the nodes' caches as a management write would, and
 * returns the queue's ids.
 */
export async function putQueueSettings(sql: Sql, backends: Backends, tenantPublicId: string, queueName: string, settings: Partial<QueueSettings>): Promise<QueueRef> {
  const topology = new TopologyRepo(sql);
  const ws = await topology.workspaceByPublicId(tenantPublicId);
  if (!ws) throw new Error(`no workspace ${tenantPublicId}`);
  const { row } = await topology.upsertQueue(ws.id, queueName, settings);
  await invalidate(backends);
  return { tenantPublicId, workspaceId: ws.id, queueId: row.id, queueName };
}

/** Writes a target's settings straight into its row (e.g. configuration saved before a rule existed). */
export async function putTargetSettings(sql: Sql, backends: Backends, tenantPublicId: string, name: string, url: string, settings: Partial<TargetSettings>): Promise<void> {
  const topology = new TopologyRepo(sql);
  const ws = await topology.workspaceByPublicId(tenantPublicId);
  await topology.upsertTarget(ws!.id, name, url, settings);
  await invalidate(backends);
}

/** What a management write does after its commit: tell every node's caches. */
export async function invalidate(backends: Backends): Promise<void> {
  const cache = testCache(backends);
  try {
    await new InvalidationBus(cache).publish('test');
  } finally {
    await cache.close();
  }
}

export function makeRecord(queue: QueueRef, overrides: Partial<EventRecord> = {}): EventRecord {
  return {
    v: 1,
    id: newId('evt'),
    tenantPublicId: queue.tenantPublicId,
    workspaceId: queue.workspaceId,
    queueId: queue.queueId,
    queueName: queue.queueName,
    receivedAt: Date.now(),
    contentType: 'application/json',
    idempotencyKey: null,
    eventType: null,
    groupKey: null,
    partitionKey: null,
    path: null,
    body: Buffer.from('{}'),
    ...overrides,
  };
}

/** Appends records to the test's event log the way ingress does (durably acknowledged). */
export async function appendRecords(t: Test, backends: Backends, records: EventRecord[]): Promise<void> {
  const config = loadConfig({}, backendConfig(backends));
  const writer = await testLogWriter(backends, config);
  try {
    await Promise.all(records.map((r) => writer.append(r)));
  } finally {
    await writer.close();
  }
  t.comment(`appended ${records.length} record(s) to ${backends.topic}`);
}

/** Polls GET /events/{id} until `predicate` holds (the attempt log is written in batches). */
export async function waitForEvent(api: ApiClient, eventId: string, predicate: (event: any) => boolean, timeoutMs = 30_000): Promise<any> {
  const until = Date.now() + timeoutMs;
  let last: unknown = null;
  while (Date.now() < until) {
    const res = await api.manage('GET', api.tenantPath(`/events/${eventId}`));
    last = res.body;
    if (res.status === 200 && predicate(res.body)) return res.body;
    await new Promise((r) => setTimeout(r, 150));
  }
  throw new Error(`event ${eventId} did not reach the expected state; last seen: ${JSON.stringify(last)}`);
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/**
 * Wires a `standard`-signed queue to a receiver that fails twice (503) then
 * accepts, posts one event and waits for the three attempts: what the
 * Standard Webhooks tests verify, attempt by attempt.
 */
export async function standardAttempts(t: Test, api: ApiClient, body = '{"type":"invoice.paid","amount":42}'): Promise<{ eventId: string; body: string; attempts: Received[]; receiver: Awaited<ReturnType<typeof startReceiver>> }> {
  const receiver = await startReceiver(t);
  let failures = 2;
  receiver.responder = (_req, res) => {
    res.statusCode = failures-- > 0 ? 503 : 200;
    res.end();
  };
  await api.wire('std', 'std-target', `${receiver.url}/std`, { outboundSigning: 'standard' }, { retryPolicy: { scheduleSeconds: [1], horizonSeconds: 60 } });
  const posted = await api.postEvent('std', body);
  t.equal(posted.status, 202);
  await receiver.waitFor((rs) => rs.length >= 3, 30_000, 'two failures and the success');
  return { eventId: posted.body.eventId as string, body, attempts: receiver.requests.slice(0, 3), receiver };
}
