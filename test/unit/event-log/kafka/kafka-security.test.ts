import t from 'tap';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AuthenticationError, MultipleErrors, NetworkError, ProtocolError, ResponseError, TimeoutError, UserError } from '@platformatic/kafka';
import { ConfigError, loadConfig } from '../../../../src/config/load-config.js';
import type { Config } from '../../../../src/config/schema.js';
import { KafkaTokenProviderError } from '../../../../src/event-log/kafka/kafka-failure.js';
import { explainKafkaFailure, kafkaSecurityOptions } from '../../../../src/event-log/kafka/kafka-security.js';
import { makeTestPki } from '../../../helpers/tls-receiver.js';

const dir = mkdtempSync(join(tmpdir(), 'sg-kafka-security-unit-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};
const kafka = (env: Record<string, string>): Readonly<Config['kafka']> => loadConfig({ KAFKA_BROKERS: '127.0.0.1:9093', ...env }).kafka;

/** The problems of the ConfigError `work` rejects with. */
async function configProblems(work: Promise<unknown>): Promise<string[]> {
  try {
    await work;
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}

t.test('nothing configured: no security options at all', async (t) => {
  t.same(await kafkaSecurityOptions(kafka({})), {});
});

t.test('TLS: the CA and client certificate files are read; verification stays on', async (t) => {
  const pki = makeTestPki(t);
  const cert = file('client.pem', pki.valid.cert);
  const key = file('client.key', pki.valid.key);
  const options = await kafkaSecurityOptions(kafka({ KAFKA_SSL: 'true', KAFKA_SSL_CA_FILE: pki.caFile, KAFKA_SSL_CERT_FILE: cert, KAFKA_SSL_KEY_FILE: key }));
  t.match(options.tls?.ca, /-----BEGIN CERTIFICATE-----/);
  t.equal(options.tls?.cert, pki.valid.cert);
  t.equal(options.tls?.key, pki.valid.key);
  t.equal(options.tls?.rejectUnauthorized, true);
  t.equal(options.sasl, undefined);
});

t.test('server name: configured name, else SNI from host names, none for IP addresses', async (t) => {
  t.equal((await kafkaSecurityOptions(kafka({ KAFKA_SSL: 'true' }))).tlsServerName, undefined, 'IP brokers: Node checks the IP, no SNI');
  t.equal((await kafkaSecurityOptions(kafka({ KAFKA_SSL: 'true', KAFKA_BROKERS: 'b1.example:9093,10.0.0.2:9093' }))).tlsServerName, true);
  t.equal((await kafkaSecurityOptions(kafka({ KAFKA_SSL: 'true', KAFKA_SSL_SERVER_NAME: 'kafka.internal' }))).tlsServerName, 'kafka.internal');
  t.same(await kafkaSecurityOptions(kafka({ KAFKA_BROKERS: 'b1.example:9092' })), {}, 'no TLS, no server name');
});

t.test('unreadable or wrong files fail naming the key and the path', async (t) => {
  const pki = makeTestPki(t);
  const missing = join(dir, 'missing.pem');
  t.same(await configProblems(kafkaSecurityOptions(kafka({ KAFKA_SSL: 'true', KAFKA_SSL_CA_FILE: missing }))), [`kafka.ssl.caFile: cannot read ${missing} (ENOENT)`]);
  const notPem = file('not.pem', 'hello');
  t.same(await configProblems(kafkaSecurityOptions(kafka({ KAFKA_SSL: 'true', KAFKA_SSL_CA_FILE: notPem }))), [`kafka.ssl.caFile: ${notPem} holds no PEM certificate`]);
  const cert = file('c.pem', pki.valid.cert);
  t.same(await configProblems(kafkaSecurityOptions(kafka({ KAFKA_SSL: 'true', KAFKA_SSL_CERT_FILE: cert, KAFKA_SSL_KEY_FILE: cert }))), [`kafka.ssl.keyFile: ${cert} holds no PEM private key`]);
  const otherKey = file('other.key', pki.expired.key);
  t.same(await configProblems(kafkaSecurityOptions(kafka({ KAFKA_SSL: 'true', KAFKA_SSL_CERT_FILE: cert, KAFKA_SSL_KEY_FILE: otherKey }))), [
    'kafka.ssl.keyFile: the key does not belong to the certificate in kafka.ssl.certFile',
  ]);
});

t.test('SASL PLAIN and SCRAM pass username and password', async (t) => {
  const options = await kafkaSecurityOptions(kafka({ KAFKA_SASL_MECHANISM: 'SCRAM-SHA-256', KAFKA_SASL_USERNAME: 'u', KAFKA_SASL_PASSWORD: 'p' }));
  t.same(options, { sasl: { mechanism: 'SCRAM-SHA-256', username: 'u', password: 'p' } });
});

t.test('OAUTHBEARER loads the token provider module and checks what it returns', async (t) => {
  const good = file('good.mjs', 'let n = 0; export default async () => `token-${++n}`;\n');
  const options = await kafkaSecurityOptions(kafka({ KAFKA_SASL_MECHANISM: 'OAUTHBEARER', KAFKA_SASL_TOKEN_PROVIDER: good }));
  t.equal(options.sasl?.mechanism, 'OAUTHBEARER');
  const token = options.sasl?.token;
  if (typeof token !== 'function') throw new Error('token is not a provider');
  t.equal(await token(), 'token-1');
  t.equal(await token(), 'token-2', 'called again for each connection');
  t.type(options.sasl?.authBytesValidator, 'function');

  const empty = file('empty.mjs', 'export default () => "";\n');
  const emptyOptions = await kafkaSecurityOptions(kafka({ KAFKA_SASL_MECHANISM: 'OAUTHBEARER', KAFKA_SASL_TOKEN_PROVIDER: empty }));
  await t.rejects((emptyOptions.sasl!.token as () => Promise<string>)(), new KafkaTokenProviderError(`the token provider ${empty} returned an empty string, not a token`));

  const noDefault = file('nodefault.mjs', 'export const token = () => "x";\n');
  t.same(await configProblems(kafkaSecurityOptions(kafka({ KAFKA_SASL_MECHANISM: 'OAUTHBEARER', KAFKA_SASL_TOKEN_PROVIDER: noDefault }))), [
    `kafka.sasl.tokenProvider: ${noDefault} must export a function as default (it exports undefined)`,
  ]);
  const missing = join(dir, 'nope.mjs');
  t.match(await configProblems(kafkaSecurityOptions(kafka({ KAFKA_SASL_MECHANISM: 'OAUTHBEARER', KAFKA_SASL_TOKEN_PROVIDER: missing }))), [
    new RegExp(`^kafka\\.sasl\\.tokenProvider: cannot load ${missing} \\(`),
  ]);
});

t.test('the OAUTHBEARER answer check fails on a JSON error status', async (t) => {
  const good = file('p.mjs', 'export default () => "t";\n');
  const check = (await kafkaSecurityOptions(kafka({ KAFKA_SASL_MECHANISM: 'OAUTHBEARER', KAFKA_SASL_TOKEN_PROVIDER: good }))).sasl!.authBytesValidator!;
  const run = (bytes: string) => new Promise<unknown>((resolve) => check(Buffer.from(bytes), (err) => resolve(err)));
  t.equal(await run(''), null, 'an empty answer is success');
  t.match(await run('{"status":"invalid_token"}'), { code: 'PLT_KFK_AUTHENTICATION', tokenStatus: 'invalid_token' });
});

// ---- explainKafkaFailure, on errors shaped as the library nests them

const brokerFailed = (broker: string, cause: Error) => new NetworkError(`Connection to ${broker} failed.`, { cause });
const anyBroker = (...errors: Error[]) => new MultipleErrors('Cannot connect to any broker.', errors);
const scram = kafka({ KAFKA_SSL: 'true', KAFKA_SASL_MECHANISM: 'SCRAM-SHA-256', KAFKA_SASL_USERNAME: 'streamgate', KAFKA_SASL_PASSWORD: 'pw' });
const nodeError = (code: string, message: string) => Object.assign(new Error(message), { code });

t.test('explains a wrong password, through retries, naming broker, mechanism and user', async (t) => {
  const auth = () => brokerFailed('127.0.0.1:9093', new AuthenticationError('SASL authentication failed.', {
    cause: new ResponseError(36, 2, { '/': [58, 'Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-256'] }, {}),
  }));
  const err = new MultipleErrors('metadata failed 2 times.', [anyBroker(auth()), anyBroker(auth())]);
  t.equal(explainKafkaFailure(err, scram.brokers, scram), 'Kafka broker 127.0.0.1:9093: SASL authentication failed (SCRAM-SHA-256, user "streamgate"): wrong username or password');
  t.equal(explainKafkaFailure(err, scram.brokers), 'Kafka broker 127.0.0.1:9093: SASL authentication failed: wrong username or password', 'without settings');
});

t.test('explains certificate, name, port and network problems', async (t) => {
  const cases: Array<[Error, string]> = [
    [nodeError('SELF_SIGNED_CERT_IN_CHAIN', 'self-signed certificate in certificate chain'),
      "TLS: the broker's certificate is not signed by a trusted CA (SELF_SIGNED_CERT_IN_CHAIN; kafka.ssl.caFile is not set)"],
    [nodeError('UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'unable to verify the first certificate'),
      "TLS: the broker's certificate is not signed by a trusted CA (UNABLE_TO_VERIFY_LEAF_SIGNATURE; kafka.ssl.caFile is not set)"],
    [Object.assign(nodeError('ERR_TLS_CERT_ALTNAME_INVALID', "Hostname/IP does not match certificate's altnames"), { reason: "Host: x. is not in the cert's altnames: DNS:localhost" }),
      "TLS: the broker's certificate does not match the server name (Host: x. is not in the cert's altnames: DNS:localhost; see kafka.ssl.serverName)"],
    [nodeError('CERT_HAS_EXPIRED', 'certificate has expired'), "TLS: the broker's certificate is not valid now (CERT_HAS_EXPIRED)"],
    [new UserError('TLS handshake failed. Please verify the broker supports TLS.', { cause: nodeError('ECONNRESET', 'Client network socket disconnected before secure TLS connection was established') }),
      'TLS handshake failed: the port does not speak TLS (a PLAINTEXT listener? check the port or set kafka.ssl.enabled false)'],
    [nodeError('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:9093'), 'connection refused (nothing listens on that port)'],
    [nodeError('ENOTFOUND', 'getaddrinfo ENOTFOUND kafka'), 'host name not found (DNS)'],
    [new AuthenticationError('The SASL/OAUTHBEARER token provider threw an error.', { cause: new KafkaTokenProviderError('the token provider ./t.mjs threw: down') }),
      'SASL authentication failed (SCRAM-SHA-256, user "streamgate"): the token provider ./t.mjs threw: down'],
    [new AuthenticationError('Cannot find a suitable SASL mechanism.', { cause: new ResponseError(17, 1, { '/': [33, null] }, {}) }),
      'SASL mechanism SCRAM-SHA-256 is not enabled on this listener'],
  ];
  for (const [cause, reason] of cases) {
    t.equal(explainKafkaFailure(anyBroker(brokerFailed('127.0.0.1:9093', cause)), scram.brokers, scram), `Kafka broker 127.0.0.1:9093: ${reason}`);
  }
});

t.test('errors without a broker address use the configured brokers', async (t) => {
  const plain = kafka({ KAFKA_BROKERS: 'k1:9093,k2:9093' });
  t.equal(explainKafkaFailure(anyBroker(new NetworkError('Connection closed while waiting for ready.')), plain.brokers, plain),
    'Kafka brokers k1:9093, k2:9093: the broker closed the connection without answering (a TLS listener? set kafka.ssl.enabled)');
  t.equal(explainKafkaFailure(new TimeoutError('Connection to k2:9093 timed out.'), plain.brokers, plain),
    'Kafka broker k2:9093: no answer within the connect timeout (a TLS listener reached without kafka.ssl.enabled?)');
  t.equal(explainKafkaFailure(new ProtocolError('ILLEGAL_SASL_STATE'), plain.brokers),
    'Kafka brokers k1:9093, k2:9093: the broker expects SASL authentication first (set kafka.sasl.mechanism for this listener)');
  t.equal(explainKafkaFailure('weird', ['k1:9093']), 'Kafka broker k1:9093: weird');
  // What 2.x answers a plain-text client when the listener sends a TLS record back.
  t.equal(explainKafkaFailure(new UserError('Broker requires TLS.'), plain.brokers, plain),
    'Kafka brokers k1:9093, k2:9093: the broker answered in TLS: this listener needs kafka.ssl.enabled');
});

t.test('different brokers with different causes each get their part', async (t) => {
  const err = anyBroker(
    brokerFailed('k1:9093', nodeError('ECONNREFUSED', 'refused')),
    brokerFailed('k2:9093', nodeError('ECONNREFUSED', 'refused')),
    brokerFailed('k3:9093', nodeError('SELF_SIGNED_CERT_IN_CHAIN', 'self-signed')),
  );
  t.equal(explainKafkaFailure(err, ['k1:9093', 'k2:9093', 'k3:9093']),
    "Kafka brokers k1:9093, k2:9093: connection refused (nothing listens on that port); Kafka broker k3:9093: TLS: the broker's certificate is not signed by a trusted CA (SELF_SIGNED_CERT_IN_CHAIN; kafka.ssl.caFile is not set)");
});
