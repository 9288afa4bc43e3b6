import t from 'tap';
import { Writable } from 'node:stream';
import { ConfigError, loadConfig } from '../../../src/config/load-config.js';
import { createLogger } from '../../../src/observability/logger.js';

/** The problems loadConfig reports for `env` (empty when it loads). */
function problems(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
    return [];
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
}

t.test('defaults: no TLS, no SASL, certificates verified', async (t) => {
  const { ssl, sasl } = loadConfig({}).kafka;
  t.same(ssl, { enabled: false, caFile: '', certFile: '', keyFile: '', serverName: '', rejectUnauthorized: true });
  t.same(sasl, { mechanism: '', username: '', password: '', tokenProvider: '' });
});

t.test('environment variables map onto kafka.ssl and kafka.sasl', async (t) => {
  const { ssl, sasl } = loadConfig({
    KAFKA_SSL: 'true',
    KAFKA_SSL_CA_FILE: '/etc/kafka/ca.pem',
    KAFKA_SSL_CERT_FILE: '/etc/kafka/client.pem',
    KAFKA_SSL_KEY_FILE: '/etc/kafka/client.key',
    KAFKA_SSL_SERVER_NAME: 'kafka.internal',
    KAFKA_SASL_MECHANISM: 'scram-sha-512',
    KAFKA_SASL_USERNAME: 'svc',
    KAFKA_SASL_PASSWORD: 's3cret',
  }).kafka;
  t.same(ssl, { enabled: true, caFile: '/etc/kafka/ca.pem', certFile: '/etc/kafka/client.pem', keyFile: '/etc/kafka/client.key', serverName: 'kafka.internal', rejectUnauthorized: true });
  t.same(sasl, { mechanism: 'SCRAM-SHA-512', username: 'svc', password: 's3cret', tokenProvider: '' }, 'mechanism upper-cased');
  const oauth = loadConfig({ KAFKA_SSL: 'true', KAFKA_SASL_MECHANISM: 'OAUTHBEARER', KAFKA_SASL_TOKEN_PROVIDER: './token.mjs' }).kafka.sasl;
  t.equal(oauth.tokenProvider, './token.mjs');
  t.equal(loadConfig({ KAFKA_SSL: 'false' }).kafka.ssl.enabled, false);
  t.equal(loadConfig({ KAFKA_SSL: '' }).kafka.ssl.enabled, false, 'empty KAFKA_SSL keeps the default');
});

t.test('bad values name the key', async (t) => {
  t.same(problems({ KAFKA_SSL: 'yes' }), ['kafka.ssl.enabled: must be true or false']);
  t.same(problems({ KAFKA_SASL_MECHANISM: 'GSSAPI' }), ['kafka.sasl.mechanism: must be one of "", PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER']);
});

t.test('a mechanism needs its credentials', async (t) => {
  t.same(problems({ KAFKA_SASL_MECHANISM: 'SCRAM-SHA-256' }), [
    'kafka.sasl.username: SCRAM-SHA-256 needs a username (env KAFKA_SASL_USERNAME)',
    'kafka.sasl.password: SCRAM-SHA-256 needs a password (env KAFKA_SASL_PASSWORD)',
  ]);
  t.same(problems({ KAFKA_SASL_MECHANISM: 'PLAIN', KAFKA_SASL_USERNAME: 'u' }), ['kafka.sasl.password: PLAIN needs a password (env KAFKA_SASL_PASSWORD)']);
  t.same(problems({ KAFKA_SASL_MECHANISM: 'OAUTHBEARER' }), ['kafka.sasl.tokenProvider: OAUTHBEARER needs a token provider module (env KAFKA_SASL_TOKEN_PROVIDER)']);
  t.same(problems({ KAFKA_SASL_MECHANISM: 'PLAIN', KAFKA_SASL_USERNAME: 'u', KAFKA_SASL_PASSWORD: 'p', KAFKA_SASL_TOKEN_PROVIDER: 't.mjs' }), [
    'kafka.sasl.tokenProvider: only used with kafka.sasl.mechanism OAUTHBEARER',
  ]);
  t.match(problems({ KAFKA_SASL_USERNAME: 'u', KAFKA_SASL_PASSWORD: 'p' }), [/^kafka\.sasl\.mechanism: a username or password is set but no mechanism/]);
});

t.test('certFile and keyFile come together; TLS files need TLS on', async (t) => {
  t.same(problems({ KAFKA_SSL: 'true', KAFKA_SSL_CERT_FILE: 'c.pem' }), [
    'kafka.ssl.keyFile (env KAFKA_SSL_KEY_FILE): a client certificate needs both kafka.ssl.certFile and kafka.ssl.keyFile',
  ]);
  t.same(problems({ KAFKA_SSL: 'true', KAFKA_SSL_KEY_FILE: 'k.pem' }), [
    'kafka.ssl.certFile (env KAFKA_SSL_CERT_FILE): a client certificate needs both kafka.ssl.certFile and kafka.ssl.keyFile',
  ]);
  t.same(problems({ KAFKA_SSL_CA_FILE: 'ca.pem' }), ['kafka.ssl.caFile: set, but kafka.ssl.enabled is false (env KAFKA_SSL=true turns TLS on)']);
});

t.test('no message quotes the password', async (t) => {
  const all = [
    ...problems({ KAFKA_SASL_PASSWORD: 'hunter2-secret' }),
    ...problems({ KAFKA_SASL_MECHANISM: 'PLAIN', KAFKA_SASL_PASSWORD: 'hunter2-secret' }),
  ];
  t.ok(all.length > 0);
  t.notOk(all.some((p) => p.includes('hunter2')));
});

t.test('the logger redacts the SASL password wherever the config is logged', async (t) => {
  const lines: string[] = [];
  const sink = new Writable({ write(chunk: Buffer, _enc, done) { lines.push(chunk.toString()); done(); } });
  const log = createLogger('info', 'test', sink);
  const config = loadConfig({ KAFKA_SASL_MECHANISM: 'SCRAM-SHA-256', KAFKA_SASL_USERNAME: 'svc', KAFKA_SASL_PASSWORD: 'hunter2-secret' });
  log.info({ config }, 'whole config');
  log.info({ kafka: config.kafka }, 'kafka section');
  log.info({ sasl: config.kafka.sasl }, 'sasl section');
  log.info({ settings: { kafka: config.kafka } }, 'nested deeper');
  t.equal(lines.length, 4);
  for (const line of lines) {
    t.notMatch(line, /hunter2/, 'password not written');
    t.match(line, /\[redacted\]/);
    t.match(line, /"svc"/, 'the username stays readable');
  }
});
