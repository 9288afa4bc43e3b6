import http from 'node:http';
import { CapturedLog } from '../helpers/log-capture.js';
import t, { type Test } from 'tap';
import { loadConfig } from '../../src/config/load-config.js';
import { createLogger } from '../../src/observability/logger.js';
import { listenThreadedNode } from '../../src/node/threads/threaded-node.js';
import { backendConfig, freshBackends, REDIS_URL, TEST_BACKEND, type Backends } from '../helpers/backends.js';
import { bootstrapDatabase, clientFor, freePort, spawnNode, startTestNode } from '../helpers/nodes.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { groupMembers, topicBounds } from '../helpers/read-topic.js';
import { sleep } from '../helpers/delivery.js';
import type { BootstrapResult } from '../../src/api/setup/bootstrap.js';
import { signRequest } from '../helpers/signing.js';
import { TcpProxy } from '../helpers/tcp-proxy.js';

/**
 * A threaded node (`streamgate start --threads N`, docs/threads.md): one
 * process whose threads share the port, the consumer group and the caches.
 * Each request here goes on a connection of its own: every thread listens on
 * the port (SO_REUSEPORT), so the kernel spreads them over the threads.
 */

interface Answer {
  status: number;
  body: any;
}

/** One request on a fresh connection (no keep-alive: every request may land on another thread). */
function freshRequest(port: number, method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path, agent: false, headers: { connection: 'close', ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString();
        let parsed: unknown = text;
        try {
          parsed = JSON.parse(text);
        } catch {
          // text
        }
        resolve({ status: res.statusCode ?? 0, body: parsed });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

function postEvent(port: number, creds: BootstrapResult, queue: string, body: string, headers: Record<string, string> = {}): Promise<Answer> {
  return freshRequest(port, 'POST', `/events/${creds.tenantPublicId}/${queue}`, { 'x-api-key': creds.ingressKey, 'content-type': 'application/json', ...headers }, body);
}

/** The value of a series in Prometheus text (0 when absent). */
function series(text: string, name: string, labels = ''): number {
  const line = text.split('\n').find((l) => l.startsWith(`${name}${labels ? `{${labels}}` : ''} `));
  return line ? Number(line.split(' ').pop()) : 0;
}

/** Every key's events reached the receiver in the order they were accepted. */
function inOrderPerKey(t: Test, receiver: Receiver, accepted: Map<string, string[]>): void {
  const seen = new Map<string, string[]>();
  for (const r of receiver.requests) {
    const key = String(r.headers['x-service-partition-key'] ?? JSON.parse(r.body.toString()).key);
    const id = String(r.headers['x-service-event-id']);
    const list = seen.get(key) ?? [];
    if (!list.includes(id)) list.push(id);
    seen.set(key, list);
  }
  let ok = true;
  for (const [key, ids] of accepted) {
    const got = (seen.get(key) ?? []).filter((id) => ids.includes(id));
    if (JSON.stringify(got) !== JSON.stringify(ids)) {
      ok = false;
      t.fail(`key ${key}: delivered ${got.join(',')} for accepted ${ids.join(',')}`);
    }
  }
  t.ok(ok, `every key's events delivered in accepted order (${accepted.size} keys)`);
}

if (TEST_BACKEND !== 'kafka') {
  t.test('the embedded backends run one thread, whatever --threads says', async (t) => {
    const backends = await freshBackends(t);
    await bootstrapDatabase(backends.databaseUrl);
    const port = await freePort();
    await spawnNode(t, backends, port, { STREAMGATE_THREADS: '2' });
    const ready = await freshRequest(port, 'GET', '/readyz');
    t.equal(ready.status, 200);
    t.notOk('threads' in ready.body.checks, 'no other threads to report');
  });
} else {
  t.test('one process of two threads', async (t) => {
    const backends = await freshBackends(t);
    const creds = await bootstrapDatabase(backends.databaseUrl);
    const receiver = await startReceiver(t);
    const port = await freePort();
    const child = await spawnNode(t, backends, port, { STREAMGATE_THREADS: '2' });
    const api = clientFor(port, creds);
    await api.wire('orders', 'orders-target', `${receiver.url}/in`);

    t.test('/readyz answers for the whole process on every thread', async (t) => {
      for (let i = 0; i < 4; i++) {
        const ready = await freshRequest(port, 'GET', '/readyz');
        t.equal(ready.status, 200);
        t.equal(ready.body.checks.threads.ok, true);
        t.equal(ready.body.checks.threads.threads, 2);
        t.same(ready.body.checks.threads.states, { 1: 'ready' });
      }
    });

    t.test('new connections are served by both threads (each listens on the port)', async (t) => {
      // A made X-Request-Id starts with a prefix of the thread that made it (src/http/request-id.ts).
      const prefixes = new Set<string>();
      for (let i = 0; i < 40 && prefixes.size < 2; i++) {
        const res = await new Promise<string>((resolve, reject) => {
          http.get({ host: '127.0.0.1', port, path: '/livez', agent: false }, (r) => {
            r.resume();
            resolve(String(r.headers['x-request-id']));
          }).on('error', reject);
        });
        prefixes.add(res.split('-')[0]!);
      }
      t.equal(prefixes.size, 2, `answers came from two threads (${[...prefixes].join(', ')})`);
    });

    t.test('the management API answers on every thread', async (t) => {
      const headers = { 'x-api-key': creds.buildKey, 'x-license-publicid': creds.licensePublicId };
      const answers = await Promise.all(Array.from({ length: 6 }, () => freshRequest(port, 'GET', api.tenantPath('/queues/orders'), headers)));
      t.same(answers.map((a) => a.status), [200, 200, 200, 200, 200, 200]);
    });

    t.test('both threads are consumer-group members, each with partitions', async (t) => {
      let members = new Map<string, number[]>();
      for (let i = 0; i < 100; i++) {
        members = await groupMembers(backends.groupId, backends.topic).catch(() => new Map());
        if (members.size === 2 && [...members.values()].every((p) => p.length > 0)) break;
        await sleep(100);
      }
      t.equal(members.size, 2);
      t.same([...members.values()].flat().sort((a, b) => a - b), [...Array((await topicBounds(backends.topic)).length).keys()], 'every partition held by one thread');
    });

    t.test('ingress answers on every thread, and per-key order holds', async (t) => {
      const before = await freshRequest(port, 'GET', '/metrics');
      const keys = Array.from({ length: 8 }, (_, i) => `k${i}`);
      const accepted = new Map<string, string[]>(keys.map((k) => [k, []]));
      // Keys in parallel, each key's events one after another (the order a sender means).
      await Promise.all(
        keys.map(async (key) => {
          for (let seq = 0; seq < 12; seq++) {
            const res = await postEvent(port, creds, 'orders', JSON.stringify({ key, seq }), { 'x-service-partition-key': key });
            t.equal(res.status, 202);
            accepted.get(key)!.push(res.body.eventId);
          }
        }),
      );
      const after = (await freshRequest(port, 'GET', '/metrics')).body as string;
      for (const thread of ['0', '1']) {
        const grew = series(after, 'streamgate_thread_http_requests_total', `thread="${thread}"`) - series(before.body, 'streamgate_thread_http_requests_total', `thread="${thread}"`);
        t.ok(grew >= 20, `thread ${thread} answered ${grew} requests`);
      }
      t.equal(series(after, 'streamgate_threads'), 2);
      const ids = [...accepted.values()].flat();
      await receiver.waitFor((r) => ids.every((id) => r.some((x) => x.headers['x-service-event-id'] === id)), 60_000, 'every accepted event');
      inOrderPerKey(t, receiver, accepted);
    });

    t.test('an idempotency key holds across threads: concurrent duplicates write one record', async (t) => {
      const bounds = await topicBounds(backends.topic);
      const total = (b: Array<[bigint, bigint]>) => b.reduce((s, [, high]) => s + high, 0n);
      const answers = await Promise.all(Array.from({ length: 6 }, () => postEvent(port, creds, 'orders', '{"dup":1}', { 'idempotency-key': 'same-key-1' })));
      t.same(new Set(answers.map((a) => a.status)), new Set([202]));
      t.equal(new Set(answers.map((a) => a.body.eventId)).size, 1, 'one event id for all six');
      t.equal(total(await topicBounds(backends.topic)) - total(bounds), 1n, 'one record written');
    });

    t.test('a signed request\'s nonce is single-use across threads: replayed_request on every one', async (t) => {
      t.equal((await api.manage('PUT', api.tenantPath('/queues/signed'), { authMode: 'signed_request' })).status, 201);
      const created = await api.manage('POST', api.tenantPath('/signing-keys'));
      const key = { keyId: created.body.keyId, secret: created.body.secret };
      const path = `/events/${creds.tenantPublicId}/signed`;
      const body = '{"once":true}';
      const headers = { 'content-type': 'application/json', ...signRequest({ pathAndQuery: path, body, key }) };
      t.equal((await freshRequest(port, 'POST', path, headers, body)).status, 202, 'first use');
      // Four fresh connections: the guard hands them to both threads.
      for (let i = 0; i < 4; i++) {
        const again = await freshRequest(port, 'POST', path, headers, body);
        t.equal(again.status, 401);
        t.equal(again.body.error?.code, 'replayed_request');
      }
    });

    t.test('a queue created through the main thread is served by every thread at once', async (t) => {
      const first = await postEvent(port, creds, 'late', '{}');
      t.equal(first.status, 404, 'unknown before');
      await api.wire('late', 'late-target', `${receiver.url}/late`);
      const answers = await Promise.all(Array.from({ length: 6 }, () => postEvent(port, creds, 'late', '{}')));
      t.same(answers.map((a) => a.status), [202, 202, 202, 202, 202, 202]);
    });

    t.test('SIGTERM drains every thread and exits 0', async (t) => {
      await child.kill('SIGTERM');
      t.equal(child.child.exitCode, 0, 'exit code 0');
    });
  });

  t.test('--threads 1 runs one thread, as before', async (t) => {
    const backends = await freshBackends(t);
    await bootstrapDatabase(backends.databaseUrl);
    const port = await freePort();
    await spawnNode(t, backends, port, { STREAMGATE_THREADS: '1' });
    const ready = await freshRequest(port, 'GET', '/readyz');
    t.equal(ready.status, 200);
    t.notOk('threads' in ready.body.checks, 'no threads check');
    const metrics = (await freshRequest(port, 'GET', '/metrics')).body as string;
    t.notOk(metrics.includes('streamgate_threads'), 'no thread series');
    let members = new Map<string, number[]>();
    for (let i = 0; i < 100 && members.size === 0; i++) {
      members = await groupMembers(backends.groupId, backends.topic).catch(() => new Map());
      if (members.size === 0) await sleep(100);
    }
    t.equal(members.size, 1, 'one consumer-group member');
  });

  t.test('the threads join the consumer group together: a backlog waiting at start is delivered once', async (t) => {
    const backends: Backends = await freshBackends(t);
    const creds = await bootstrapDatabase(backends.databaseUrl);
    const receiver = await startReceiver(t);
    // The receiver holds its answers until the process is up (every thread started): whatever a
    // thread sent before a rebalance would still be in flight, and sent again by the next owner.
    let up = false;
    const held: Array<() => void> = [];
    receiver.responder = (_req, res) => {
      const answer = () => setTimeout(() => res.end('ok'), 5);
      if (up) answer();
      else held.push(answer);
    };
    // The backlog: written by a node without delivery, before the threaded node starts.
    const writer = await startTestNode(t, backends, { roles: ['ingress', 'management'] });
    await clientFor(writer.port, creds).wire('backlog', 'backlog-target', `${receiver.url}/backlog`);
    const keys = Array.from({ length: 64 }, (_, i) => `b${i}`);
    let accepted = 0;
    await Promise.all(
      keys.map(async (key) => {
        for (let seq = 0; seq < 40; seq++) {
          const res = await postEvent(writer.port, creds, 'backlog', JSON.stringify({ key, seq }), { 'x-service-partition-key': key });
          if (res.status === 202) accepted++;
        }
      }),
    );
    t.equal(accepted, keys.length * 40, 'the backlog is in the log');
    await writer.stop();

    const config = loadConfig({}, backendConfig(backends, { roles: ['delivery'] }));
    // The supervisor's warnings (a thread that missed the join barrier) explain a failure below.
    const warnings = new CapturedLog();
    const node = await listenThreadedNode(config, 4, createLogger('warn', 'streamgate', warnings.stream()));
    t.teardown(() => node.stop());
    await node.up;
    up = true;
    for (const answer of held.splice(0)) answer();
    await receiver.waitFor(() => new Set(receiver.eventIds()).size >= accepted, 90_000, 'the whole backlog');
    const ids = receiver.eventIds();
    t.equal(new Set(ids).size, accepted, 'every event delivered');
    t.equal(ids.length - new Set(ids).size, 0, `no event delivered twice (no rebalance as the threads came up)${warnings.lines.length ? `; main thread warned: ${warnings.text}` : ''}`);
    const members = await groupMembers(backends.groupId, backends.topic);
    t.equal(members.size, 4, 'four consumer-group members');
  });

  t.test('a node thread that crashes mid-load loses no accepted event and is started again', async (t) => {
    const backends: Backends = await freshBackends(t);
    const creds = await bootstrapDatabase(backends.databaseUrl);
    const receiver = await startReceiver(t);
    const base = backendConfig(backends);
    const config = loadConfig({}, { ...base, server: { ...(base.server as object), shutdownTimeoutMs: 15_000 }, kafka: { ...(base.kafka as object), sessionTimeoutMs: 10_000, heartbeatIntervalMs: 1_000 } });
    const node = await listenThreadedNode(config, 2, createLogger(config.log.level));
    t.teardown(() => node.stop());
    await node.up;
    const port = node.port;
    await clientFor(port, creds).wire('crash', 'crash-target', `${receiver.url}/crash`);

    const accepted = new Map<string, string[]>();
    let refused = 0;
    let crashed = false;
    await Promise.all(
      Array.from({ length: 16 }, async (_, k) => {
        const key = `c${k}`;
        accepted.set(key, []);
        for (let seq = 0; seq < 25; seq++) {
          if (k === 0 && seq === 8 && !crashed) {
            crashed = true;
            node.__crashThread(1);
          }
          // A request the crashed thread held is answered by nobody: not accepted, not counted.
          const res = await postEvent(port, creds, 'crash', JSON.stringify({ key, seq }), { 'x-service-partition-key': key }).catch(() => null);
          if (res?.status === 202) accepted.get(key)!.push(res.body.eventId);
          else refused++;
        }
      }),
    );
    const ids = [...accepted.values()].flat();
    t.comment(`${ids.length} accepted, ${refused} not accepted around the crash`);
    t.ok(ids.length >= 300, 'most requests accepted');
    await receiver.waitFor((r) => ids.every((id) => r.some((x) => x.headers['x-service-event-id'] === id)), 90_000, 'every accepted event');
    t.pass('every accepted event delivered');
    // The thread was started again and the process is ready once more.
    let ready: Answer | null = null;
    const since = Date.now();
    for (let i = 0; i < 600; i++) {
      ready = await freshRequest(port, 'GET', '/readyz');
      if (ready.status === 200) break;
      await sleep(100);
    }
    t.equal(ready?.status, 200, `ready again: ${JSON.stringify(ready?.body)}`);
    t.comment(`ready again ${Date.now() - since} ms after the last event was delivered`);
    t.same(ready?.body.checks.threads.states, { 1: 'ready' }, 'thread 1 is back');
  });

  t.test('a Redis cut: /readyz names redis whichever thread answers it', async (t) => {
    const backends = await freshBackends(t);
    await bootstrapDatabase(backends.databaseUrl);
    const proxy = await TcpProxy.start(t, new URL(REDIS_URL).host);
    const port = await freePort();
    await spawnNode(t, backends, port, { STREAMGATE_THREADS: '2', REDIS_URL: proxy.rewrite(REDIS_URL) });
    t.equal((await freshRequest(port, 'GET', '/readyz')).status, 200, 'ready before the cut');
    await proxy.cut('refuse');
    // Each thread runs its own checks every health.intervalMs; wait until the process says so.
    let answers: Answer[] = [];
    for (let i = 0; i < 100; i++) {
      answers = await Promise.all(Array.from({ length: 6 }, () => freshRequest(port, 'GET', '/readyz')));
      if (answers.every((a) => a.status === 503 && a.body.failing?.includes('redis'))) break;
      await sleep(100);
    }
    for (const a of answers) {
      t.equal(a.status, 503);
      t.ok(a.body.failing?.includes('redis'), `failing names redis: ${JSON.stringify(a.body.failing)}`);
      t.notOk(a.body.failing?.includes('threads'), 'the other thread is named by what fails there, not as "threads"');
      t.notMatch(JSON.stringify(a.body.checks), /thread \d not_ready(?! \()/, 'no thread reported without its cause');
    }
    await proxy.restore();
    let ready: Answer | null = null;
    for (let i = 0; i < 100; i++) {
      ready = await freshRequest(port, 'GET', '/readyz');
      if (ready.status === 200) break;
      await sleep(100);
    }
    t.equal(ready?.status, 200, 'ready again after the restore');
    t.same(ready?.body.failing, []);
  });
}
