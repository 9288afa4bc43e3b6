import t, { type Test } from 'tap';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Admin, Consumer, Producer, stringSerializers } from '@platformatic/kafka';
import { loadConfig } from '../../../src/config/load-config.js';
import type { Config } from '../../../src/config/schema.js';
import { explainKafkaFailure, kafkaSecurityOptions } from '../../../src/event-log/kafka/kafka-security.js';
import { KAFKA_BROKERS, TEST_BACKEND, uniqueSuffix } from '../../helpers/backends.js';
import { makeTestPki } from '../../helpers/tls-receiver.js';

/**
 * TLS and SASL against the real SASL_SSL listener that config/infra/up.sh
 * adds to the local broker (127.0.0.1:9093, test CA and SCRAM users made by
 * the script). Where to find them, as up.sh prints them:
 *   KAFKA_SSL_BROKERS         the SASL_SSL listener (default 127.0.0.1:9093)
 *   STREAMGATE_KAFKA_TLS_DIR  ca.pem, client.pem, client.key (default <cache>/kafka-tls)
 *   KAFKA_SASL_USERNAME / KAFKA_SASL_PASSWORD  (default up.sh's test user)
 *   KAFKA_BROKERS             the PLAINTEXT listener (default 127.0.0.1:9092)
 */
const SSL_BROKERS = process.env.KAFKA_SSL_BROKERS ?? '127.0.0.1:9093';
const TLS_DIR = process.env.STREAMGATE_KAFKA_TLS_DIR ?? join(process.env.STREAMGATE_CACHE ?? join(homedir(), '.cache', 'streamgate'), 'kafka-tls');
const USER = process.env.KAFKA_SASL_USERNAME ?? 'streamgate';
const PASSWORD = process.env.KAFKA_SASL_PASSWORD ?? 'streamgate-test-secret';
const CA_FILE = join(TLS_DIR, 'ca.pem');

// Kafka-only, and the same whichever backend the suite runs for: once is enough.
if (TEST_BACKEND === 'embedded') {
  t.pass('runs with STREAMGATE_TEST_BACKEND=kafka only');
  process.exit(0);
}

const work = mkdtempSync(join(tmpdir(), 'sg-kafka-security-'));
t.teardown(() => rmSync(work, { recursive: true, force: true }));

/** kafka settings as streamgate would load them from this environment. */
function settings(env: Record<string, string>): Readonly<Config['kafka']> {
  return loadConfig({ KAFKA_BROKERS: SSL_BROKERS, KAFKA_SSL: 'true', KAFKA_SSL_CA_FILE: CA_FILE, ...env }).kafka;
}
const scram = (mechanism: string, password = PASSWORD) =>
  settings({ KAFKA_SASL_MECHANISM: mechanism, KAFKA_SASL_USERNAME: USER, KAFKA_SASL_PASSWORD: password });

/** Client options: no retries and short timeouts, so a failure shows in seconds rather than hanging. */
async function clientOptions(kafka: Readonly<Config['kafka']>) {
  return {
    clientId: 'sg-test-security',
    bootstrapBrokers: [...kafka.brokers],
    retries: 0,
    connectTimeout: 3_000,
    requestTimeout: 5_000,
    timeout: 5_000,
    ...(await kafkaSecurityOptions(kafka)),
  };
}

/** An Admin for `kafka`, closed at teardown. */
async function admin(t: Test, kafka: Readonly<Config['kafka']>): Promise<Admin> {
  const client = new Admin(await clientOptions(kafka));
  t.teardown(() => client.close());
  return client;
}

/** Asks for metadata and returns the explained failure, checking it came within a few seconds. */
async function failure(t: Test, kafka: Readonly<Config['kafka']>): Promise<string> {
  const client = await admin(t, kafka);
  const started = Date.now();
  try {
    await client.metadata({ topics: [] });
  } catch (err) {
    t.ok(Date.now() - started < 8_000, `failed within seconds (${Date.now() - started} ms), not a hang`);
    return explainKafkaFailure(err, kafka.brokers, kafka);
  }
  t.fail('expected the connection to fail');
  return '';
}

t.test('SCRAM-SHA-256: a record produced over SASL_SSL is read back', async (t) => {
  const kafka = scram('SCRAM-SHA-256');
  const options = await clientOptions(kafka);
  const topic = `sg-test-security-${uniqueSuffix()}`;
  const adm = await admin(t, kafka);
  await adm.createTopics({ topics: [topic], partitions: 1, replicas: 1 });
  t.teardown(() => adm.deleteTopics({ topics: [topic] }).catch(() => {}));

  const producer = new Producer({ ...options, serializers: stringSerializers });
  t.teardown(() => producer.close());
  await producer.send({ messages: [{ topic, key: 'k', value: 'over TLS' }] });

  const consumer = new Consumer({ ...options, groupId: `sg-test-security-${uniqueSuffix()}` });
  t.teardown(() => consumer.close());
  const offsets = await consumer.listOffsets({ topics: [topic] });
  t.same(offsets.get(topic), [1n], 'the end offset moved past the one record');
});

t.test('SCRAM-SHA-512 with the right password connects', async (t) => {
  const metadata = await (await admin(t, scram('SCRAM-SHA-512'))).metadata({ topics: [] });
  t.ok(metadata.brokers.size >= 1);
});

t.test('PLAIN with the right password connects', async (t) => {
  const metadata = await (await admin(t, scram('PLAIN'))).metadata({ topics: [] });
  t.ok(metadata.brokers.size >= 1);
});

t.test('a wrong password fails fast and the explanation names broker, mechanism and user', async (t) => {
  for (const mechanism of ['SCRAM-SHA-256', 'SCRAM-SHA-512', 'PLAIN']) {
    const line = await failure(t, scram(mechanism, 'not-the-password'));
    t.equal(line, `Kafka broker ${SSL_BROKERS}: SASL authentication failed (${mechanism}, user "${USER}"): wrong username or password`);
    t.notMatch(line, /not-the-password/, 'the password is not in the message');
  }
});

t.test('a CA that did not sign the broker certificate fails naming the certificate problem', async (t) => {
  const foreign = makeTestPki(t);
  const line = await failure(t, settings({
    KAFKA_SSL_CA_FILE: foreign.caFile, KAFKA_SASL_MECHANISM: 'SCRAM-SHA-256', KAFKA_SASL_USERNAME: USER, KAFKA_SASL_PASSWORD: PASSWORD,
  }));
  t.match(line, new RegExp(`^Kafka broker ${SSL_BROKERS}: TLS: the broker's certificate is not signed by a trusted CA \\((SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT_LOCALLY)`));
  t.match(line, foreign.caFile, 'names the CA file in use');
});

t.test('a server name the certificate does not carry fails', async (t) => {
  const line = await failure(t, settings({ KAFKA_SSL_SERVER_NAME: 'wrong.example', KAFKA_SASL_MECHANISM: 'SCRAM-SHA-256', KAFKA_SASL_USERNAME: USER, KAFKA_SASL_PASSWORD: PASSWORD }));
  t.match(line, `Kafka broker ${SSL_BROKERS}: TLS: the broker's certificate does not match the server name`);
  t.match(line, 'wrong.example');
});

t.test('without kafka.ssl.serverName the broker host name is sent and checked', async (t) => {
  // The broker certificate names localhost and 127.0.0.1, so "localhost" passes the check.
  const port = SSL_BROKERS.slice(SSL_BROKERS.lastIndexOf(':') + 1);
  const kafka = loadConfig({
    KAFKA_BROKERS: `localhost:${port}`, KAFKA_SSL: 'true', KAFKA_SSL_CA_FILE: CA_FILE,
    KAFKA_SASL_MECHANISM: 'SCRAM-SHA-256', KAFKA_SASL_USERNAME: USER, KAFKA_SASL_PASSWORD: PASSWORD,
  }).kafka;
  t.equal((await kafkaSecurityOptions(kafka)).tlsServerName, true, 'a host name is sent as SNI');
  const metadata = await (await admin(t, kafka)).metadata({ topics: [] });
  t.ok(metadata.brokers.size >= 1);
});

t.test('mTLS: the client certificate signed by the test CA is accepted', async (t) => {
  const kafka = settings({
    KAFKA_SSL_CERT_FILE: join(TLS_DIR, 'client.pem'), KAFKA_SSL_KEY_FILE: join(TLS_DIR, 'client.key'),
    KAFKA_SASL_MECHANISM: 'SCRAM-SHA-256', KAFKA_SASL_USERNAME: USER, KAFKA_SASL_PASSWORD: PASSWORD,
  });
  const metadata = await (await admin(t, kafka)).metadata({ topics: [] });
  t.ok(metadata.brokers.size >= 1);
});

t.test('mTLS: a client certificate from another CA is refused by the broker', async (t) => {
  const foreign = makeTestPki(t);
  const cert = join(work, 'foreign-client.pem');
  const key = join(work, 'foreign-client.key');
  writeFileSync(cert, foreign.valid.cert);
  writeFileSync(key, foreign.valid.key);
  const line = await failure(t, settings({
    KAFKA_SSL_CERT_FILE: cert, KAFKA_SSL_KEY_FILE: key,
    KAFKA_SASL_MECHANISM: 'SCRAM-SHA-256', KAFKA_SASL_USERNAME: USER, KAFKA_SASL_PASSWORD: PASSWORD,
  }));
  t.match(line, new RegExp(`^Kafka broker ${SSL_BROKERS}: (TLS|the broker closed)`), line);
});

t.test('OAUTHBEARER: the token provider module is called and its token accepted', async (t) => {
  // The test listener runs Kafka's unsecured validator: an unsigned JWT with sub, iat and exp.
  const provider = join(work, 'token-provider.mjs');
  writeFileSync(provider, `let calls = 0;
const b64 = (o) => Buffer.from(JSON.stringify(o)).toString('base64url');
export default async function token() {
  calls++;
  globalThis.__sgTokenCalls = calls;
  const now = Math.floor(Date.now() / 1000);
  return b64({ alg: 'none' }) + '.' + b64({ sub: 'streamgate', iat: now, exp: now + 600 }) + '.';
}
`);
  const kafka = settings({ KAFKA_SASL_MECHANISM: 'OAUTHBEARER', KAFKA_SASL_TOKEN_PROVIDER: provider });
  const metadata = await (await admin(t, kafka)).metadata({ topics: [] });
  t.ok(metadata.brokers.size >= 1);
  t.ok(((globalThis as { __sgTokenCalls?: number }).__sgTokenCalls ?? 0) >= 1, 'the provider was called');
});

t.test('OAUTHBEARER: a token the broker refuses fails as an authentication failure', async (t) => {
  const provider = join(work, 'bad-token-provider.mjs');
  writeFileSync(provider, 'export default () => "not-a-jwt";\n');
  const line = await failure(t, settings({ KAFKA_SASL_MECHANISM: 'OAUTHBEARER', KAFKA_SASL_TOKEN_PROVIDER: provider }));
  t.equal(line, `Kafka broker ${SSL_BROKERS}: SASL authentication failed (OAUTHBEARER): the broker refused the token (invalid_token)`);
});

t.test('OAUTHBEARER: a provider that throws is named', async (t) => {
  const provider = join(work, 'throwing-provider.mjs');
  writeFileSync(provider, 'export default async () => { throw new Error("identity provider down"); };\n');
  const line = await failure(t, settings({ KAFKA_SASL_MECHANISM: 'OAUTHBEARER', KAFKA_SASL_TOKEN_PROVIDER: provider }));
  t.match(line, `Kafka broker ${SSL_BROKERS}: SASL authentication failed (OAUTHBEARER): the token provider ${provider} threw: identity provider down`);
});

t.test('TLS to the PLAINTEXT listener fails saying the port does not speak TLS', async (t) => {
  const plain = KAFKA_BROKERS.split(',')[0]!;
  const line = await failure(t, loadConfig({ KAFKA_BROKERS: plain, KAFKA_SSL: 'true', KAFKA_SSL_CA_FILE: CA_FILE }).kafka);
  t.equal(line, `Kafka broker ${plain}: TLS handshake failed: the port does not speak TLS (a PLAINTEXT listener? check the port or set kafka.ssl.enabled false)`);
});

t.test('plain text to the SASL_SSL listener fails saying TLS may be missing', async (t) => {
  const line = await failure(t, loadConfig({ KAFKA_BROKERS: SSL_BROKERS, KAFKA_SASL_MECHANISM: 'SCRAM-SHA-256', KAFKA_SASL_USERNAME: USER, KAFKA_SASL_PASSWORD: PASSWORD }).kafka);
  t.match(line, new RegExp(`^Kafka broker ${SSL_BROKERS}: (the broker closed the connection without answering \\(a TLS listener\\? set kafka.ssl.enabled\\)|no answer within the connect timeout)`));
});
