import t from 'tap';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { backendConfig, freshBackends, TEST_BACKEND } from '../../helpers/backends.js';
import { bootstrapDatabase, clientFor, startFailure, startTestNode } from '../../helpers/nodes.js';
import { startReceiver } from '../../helpers/receiver.js';
import { loadConfig } from '../../../src/config/load-config.js';

/**
 * The whole event path over the broker's SASL_SSL listener (config/infra:
 * 127.0.0.1:9093, the local test CA, SCRAM users): a node whose every Kafka
 * connection (topic admin, producer, consumer group, lookups) uses TLS and
 * SCRAM accepts an event and delivers it; a wrong password or a CA that did
 * not sign the broker's certificate stops the node at start with one line
 * that names the broker and the cause.
 */
const SSL_BROKERS = process.env.KAFKA_SSL_BROKERS ?? '127.0.0.1:9093';
const TLS_DIR = process.env.STREAMGATE_KAFKA_TLS_DIR ?? join(process.env.STREAMGATE_CACHE ?? join(homedir(), '.cache', 'streamgate'), 'kafka-tls');
const USER = process.env.KAFKA_SASL_USERNAME ?? 'streamgate';
const PASSWORD = process.env.KAFKA_SASL_PASSWORD ?? 'streamgate-test-secret';

if (TEST_BACKEND !== 'kafka') {
  t.pass('the SASL_SSL listener is a Kafka matter: nothing to check on the embedded log');
} else {
  const secured = (b: Awaited<ReturnType<typeof freshBackends>>, sasl: Record<string, string>, caFile = join(TLS_DIR, 'ca.pem')) => ({
    kafka: {
      ...(backendConfig(b).kafka as Record<string, unknown>),
      brokers: SSL_BROKERS.split(','),
      ssl: { enabled: true, caFile },
      sasl,
    },
  });

  t.test('ingress → Kafka → delivery through SASL_SSL with SCRAM-SHA-512', async (t) => {
    const backends = await freshBackends(t);
    const creds = await bootstrapDatabase(backends.databaseUrl);
    const node = await startTestNode(t, backends, secured(backends, { mechanism: 'SCRAM-SHA-512', username: USER, password: PASSWORD }));
    const api = clientFor(node.port, creds);
    const receiver = await startReceiver(t);
    await api.wire('secured', 'secured-target', `${receiver.url}/in`);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await api.postEvent('secured', JSON.stringify({ i }), { 'x-service-partition-key': 'k' });
      t.equal(res.status, 202);
      ids.push(res.body.eventId);
    }
    await receiver.waitFor((r) => r.length >= 5, 30_000, 'five deliveries');
    t.same(receiver.eventIds(), ids, 'every event delivered, in order');
    // The lookup path (an event read back from the log) goes over the same listener.
    const shown = await api.manage('GET', api.tenantPath(`/events/${ids[0]}`));
    t.equal(shown.status, 200, 'the event is shown');
  });

  for (const [name, sasl, caFile, cause] of [
    ['a wrong password', { mechanism: 'SCRAM-SHA-256', username: USER, password: 'not-the-password' }, undefined, /SASL authentication failed.*SCRAM-SHA-256.*wrong username or password/],
    ['a CA that did not sign the broker certificate', { mechanism: 'SCRAM-SHA-256', username: USER, password: PASSWORD }, join(TLS_DIR, 'client.pem'), /certificate/i],
  ] as const) {
    t.test(`${name} stops the node at start with one line naming the broker and the cause`, async (t) => {
      const backends = await freshBackends(t);
      const config = loadConfig({}, { ...backendConfig(backends), ...secured(backends, { ...sasl }, caFile) });
      const started = Date.now();
      const outcome = await startFailure(config);
      const waited = Date.now() - started;
      t.ok(outcome instanceof Error, 'the node did not start');
      t.equal(outcome?.name, 'KafkaUnavailableError');
      t.match(outcome?.message, new RegExp(`^Kafka broker ${SSL_BROKERS.replace(/\./g, '\\.')}: `), String(outcome?.message));
      t.match(outcome?.message, cause);
      t.notMatch(outcome?.message ?? '', /not-the-password|streamgate-test-secret/, 'no password in the message');
      t.notMatch(outcome?.message ?? '', /\n\s+at /, 'no stack trace');
      t.ok(waited < 15_000, `failed fast (${waited} ms), not after a minute of retries`);
    });
  }
}
