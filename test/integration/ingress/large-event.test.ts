import t from 'tap';
import { randomBytes } from 'node:crypto';
import { freshBackends } from '../../helpers/backends.js';
import { bootstrapDatabase, clientFor, startTestNode } from '../../helpers/nodes.js';
import { startReceiver } from '../../helpers/receiver.js';
import { countRecords } from '../../helpers/topic.js';

/**
 * The largest body ingress accepts (server.maxBodyBytes, 1 MiB by default) is
 * stored and delivered byte for byte: on Kafka the event topic is created with
 * a max.message.bytes that fits it (the broker's default would refuse it), and
 * one byte more is 413 before anything is written.
 */
const backends = await freshBackends(t);
const creds = await bootstrapDatabase(backends.databaseUrl);
const node = await startTestNode(t, backends, {});
const api = clientFor(node.port, creds);

t.test('a body of exactly server.maxBodyBytes is accepted and delivered whole; one byte more is 413', async (t) => {
  const receiver = await startReceiver(t);
  await api.wire('large', 'large-target', `${receiver.url}/large`);
  const limit = 1_048_576;
  const body = randomBytes(limit);
  const res = await api.postEvent('large', body, { 'content-type': 'application/octet-stream' });
  t.equal(res.status, 202, JSON.stringify(res.body));
  await receiver.waitFor((r) => r.length >= 1, 60_000, 'the large delivery');
  t.ok(receiver.requests[0]!.body.equals(body), `${limit} bytes delivered identical`);
  t.equal(receiver.requests[0]!.headers['x-service-event-id'], res.body.eventId);

  const before = await countRecords(backends);
  const over = await api.postEvent('large', randomBytes(limit + 1), { 'content-type': 'application/octet-stream' });
  t.equal(over.status, 413);
  t.equal(over.body?.error?.code, 'payload_too_large');
  t.equal(await countRecords(backends), before, 'nothing written');
});

t.test('a management body over server.maxManagementBodyBytes (256 KiB) is 413 payload_too_large, answered whole', async (t) => {
  const res = await api.manage('PUT', api.tenantPath('/queues/too-big'), { note: 'n'.repeat(300_000) });
  t.equal(res.status, 413);
  t.equal(res.body?.error?.code, 'payload_too_large');
  t.equal((await api.manage('GET', api.tenantPath('/queues/too-big'))).status, 404, 'nothing saved');
});
