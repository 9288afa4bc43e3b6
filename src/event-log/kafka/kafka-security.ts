import { readFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import { resolve } from 'node:path';
import { createSecureContext, type ConnectionOptions as TlsOptions } from 'node:tls';
import { pathToFileURL } from 'node:url';
import { AuthenticationError, type SASLOptions } from '@platformatic/kafka';
import { ConfigError } from '../../config/load-config.js';
import { KafkaTokenProviderError } from './kafka-failure.js';
import { guardLateConnectionErrors } from './kafka-late-errors.js';
import type { Config } from '../../config/schema.js';

/**
 * kafka.ssl and kafka.sasl turned into the connection options of
 * @platformatic/kafka, for every client streamgate makes (producer, consumer,
 * admin). Files are read and the token provider imported here, once at boot,
 * so a wrong path stops the start with the key's name instead of failing on
 * the first connection.
 */

// The failure side lives in its own file; re-exported so callers need one import.
export { explainKafkaFailure, KafkaUnavailableError } from './kafka-failure.js';

/** The part of a client's options that carries TLS and SASL. */
export interface KafkaSecurityOptions {
  tls?: TlsOptions;
  tlsServerName?: string | boolean;
  sasl?: SASLOptions;
}

type SecuritySettings = Readonly<Pick<Config['kafka'], 'brokers' | 'ssl' | 'sasl'>>;

/** Reads the PEM files and loads the token provider that `settings` name. */
export async function kafkaSecurityOptions(settings: SecuritySettings): Promise<KafkaSecurityOptions> {
  const out: KafkaSecurityOptions = {};
  if (settings.ssl.enabled) {
    out.tls = await tlsOptions(settings.ssl);
    const serverName = sniName(settings);
    if (serverName !== undefined) out.tlsServerName = serverName;
  }
  if (settings.sasl.mechanism !== '') {
    out.sasl = await saslOptions(settings.sasl);
    // SASL is where the library can emit an error nobody listens to (see the file).
    guardLateConnectionErrors();
  }
  return out;
}

async function tlsOptions(ssl: SecuritySettings['ssl']): Promise<TlsOptions> {
  const tls: TlsOptions = { rejectUnauthorized: ssl.rejectUnauthorized };
  // `ca` replaces Node's default store: a cluster with its own CA should not
  // also accept any publicly issued certificate for its brokers' names.
  if (ssl.caFile !== '') tls.ca = await readPem('kafka.ssl.caFile', ssl.caFile, 'CERTIFICATE');
  if (ssl.certFile !== '') {
    tls.cert = await readPem('kafka.ssl.certFile', ssl.certFile, 'CERTIFICATE');
    tls.key = await readPem('kafka.ssl.keyFile', ssl.keyFile, 'PRIVATE KEY');
  }
  try {
    // What the first connection would do anyway; here its failure names the keys.
    createSecureContext(tls);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const which = code === 'ERR_OSSL_X509_KEY_VALUES_MISMATCH'
      ? 'kafka.ssl.keyFile: the key does not belong to the certificate in kafka.ssl.certFile'
      : `kafka.ssl: the files cannot be used for TLS (${(err as Error).message})`;
    throw new ConfigError([which]);
  }
  return tls;
}

/**
 * The SNI name. Node checks the certificate against `servername` when given,
 * else against the host it connected to, so the name check is on either way.
 * `true` sends each broker's host as SNI (proxies and managed clusters route
 * on it); it is left out when every broker is an IP address, since SNI may
 * not carry one and Node warns when asked to.
 */
function sniName({ ssl, brokers }: SecuritySettings): string | boolean | undefined {
  if (ssl.serverName !== '') return ssl.serverName;
  const hosts = brokers.map((b) => b.slice(0, b.lastIndexOf(':')));
  return hosts.every((host) => isIP(host) !== 0) ? undefined : true;
}

async function readPem(key: string, path: string, label: 'CERTIFICATE' | 'PRIVATE KEY'): Promise<string> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    const { code, message } = err as NodeJS.ErrnoException;
    throw new ConfigError([`${key}: cannot read ${path} (${code ?? message})`]);
  }
  // Matches BEGIN CERTIFICATE, and BEGIN PRIVATE KEY / EC PRIVATE KEY / RSA PRIVATE KEY.
  if (!new RegExp(`-----BEGIN [A-Z ]*${label}-----`).test(text)) {
    throw new ConfigError([`${key}: ${path} holds no PEM ${label.toLowerCase()}`]);
  }
  return text;
}

async function saslOptions(sasl: SecuritySettings['sasl']): Promise<SASLOptions> {
  const { mechanism } = sasl;
  if (mechanism === '') throw new Error('saslOptions needs a mechanism');
  if (mechanism !== 'OAUTHBEARER') return { mechanism, username: sasl.username, password: sasl.password };
  return { mechanism, token: await loadTokenProvider(sasl.tokenProvider), authBytesValidator: checkOAuthAnswer };
}

type TokenProvider = () => string | Promise<string>;

/** Imports kafka.sasl.tokenProvider and wraps its default export so a bad result says where it came from. */
async function loadTokenProvider(path: string): Promise<() => Promise<string>> {
  let provider: unknown;
  try {
    const mod = (await import(pathToFileURL(resolve(path)).href)) as { default?: unknown };
    provider = mod.default;
  } catch (err) {
    throw new ConfigError([`kafka.sasl.tokenProvider: cannot load ${path} (${(err as Error).message})`]);
  }
  if (typeof provider !== 'function') {
    throw new ConfigError([`kafka.sasl.tokenProvider: ${path} must export a function as default (it exports ${typeof provider})`]);
  }
  const call = provider as TokenProvider;
  return async () => {
    let token: unknown;
    try {
      token = await call();
    } catch (err) {
      throw new KafkaTokenProviderError(`the token provider ${path} threw: ${(err as Error)?.message ?? String(err)}`, { cause: err });
    }
    if (typeof token !== 'string' || token === '') {
      throw new KafkaTokenProviderError(`the token provider ${path} returned ${token === '' ? 'an empty string' : typeof token}, not a token`);
    }
    return token;
  };
}

/**
 * A broker that refuses an OAUTHBEARER token does not answer with an error
 * code: it answers with a JSON error ({"status":"invalid_token",...}, RFC 7628)
 * and fails the next request instead. Checking the answer here makes the
 * connection fail as an authentication failure, naming the status.
 */
const checkOAuthAnswer: NonNullable<SASLOptions['authBytesValidator']> = (authBytes, callback) => {
  let status: unknown;
  if (authBytes.length > 0) {
    try {
      status = (JSON.parse(authBytes.toString('utf8')) as { status?: unknown }).status;
    } catch {
      status = 'unreadable answer';
    }
  }
  if (status === undefined) callback(null, authBytes);
  else callback(new AuthenticationError('OAUTHBEARER token refused by the broker.', { tokenStatus: String(status) }), authBytes);
};
