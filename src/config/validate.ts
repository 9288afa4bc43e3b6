import type { FieldProblem } from '../errors.js';
import { compileBody, type BodyCheck } from '../schema/body-validator.js';
import { REMOVED_SETTINGS, schema, type Config } from './schema.js';

/*
 * The configuration is checked by the validator of the API bodies
 * (src/schema/body-validator.ts), so a setting's problem reads like a field's:
 * "server.port: must be an integer from 0 to 65535". Compiled on first use:
 * modules that only import ConfigError do not pay for it.
 */
let checkSchema: BodyCheck<typeof schema> | undefined;

/**
 * Checks a merged configuration: the schema (every key, its type and bounds),
 * then, once that passed, the rules between settings (crossCheck). Returns the
 * valid configuration, or one `path: problem` line per problem.
 */
export function checkConfig(value: unknown): { ok: true; config: Config } | { ok: false; problems: string[] } {
  checkSchema ??= compileBody(schema);
  const checked = checkSchema(value);
  if (!checked.ok) return { ok: false, problems: checked.problems.map(settingProblem) };
  const problems = crossCheck(checked.value);
  return problems.length === 0 ? { ok: true, config: checked.value } : { ok: false, problems };
}

/** One schema problem as a line: a key the schema does not name is a removed setting (with where it went) or an unknown one. */
function settingProblem({ field, problem }: FieldProblem): string {
  const path = field === '(body)' ? '(root)' : field;
  if (problem === 'unknown field') return `${path}: ${REMOVED_SETTINGS[path] ?? 'unknown setting'}`;
  return `${path}: ${problem}`;
}

/**
 * Rules between settings, which the per-key schema cannot express; run once
 * the schema passed. One message per broken rule, naming the setting to change.
 */
export function crossCheck(config: Config): string[] {
  const problems: string[] = [];
  const { retryMs, requestTimeoutMs } = config.kafka.producer;
  // An Idempotency-Key reservation must outlive the append it guards: if it
  // expired while the producer still retried, a duplicate request could claim
  // the key and append the event a second time.
  const longestAppend = retryMs + requestTimeoutMs;
  if (config.kafka.brokers.length > 0 && config.ingress.idempotencyPendingTtlMs <= longestAppend) {
    problems.push(
      `ingress.idempotencyPendingTtlMs: must exceed the longest Kafka append, kafka.producer.retryMs + kafka.producer.requestTimeoutMs = ${longestAppend} ms`,
    );
  }
  if (config.server.shutdownTimeoutMs <= config.server.drainDelayMs) {
    problems.push(`server.shutdownTimeoutMs: must exceed server.drainDelayMs (${config.server.drainDelayMs} ms), or nothing is left to finish in-flight work`);
  }
  problems.push(...kafkaSecurityProblems(config.kafka));
  return problems;
}

/** TLS and SASL settings that only make sense together (the env name is given where there is one). */
function kafkaSecurityProblems({ ssl, sasl }: Config['kafka']): string[] {
  const problems: string[] = [];
  // Files for a TLS that is off would be silently ignored and the connection
  // left in clear text: refuse rather than guess which of the two was meant.
  if (!ssl.enabled) {
    for (const key of ['caFile', 'certFile', 'keyFile', 'serverName'] as const) {
      if (ssl[key] !== '') problems.push(`kafka.ssl.${key}: set, but kafka.ssl.enabled is false (env KAFKA_SSL=true turns TLS on)`);
    }
  }
  if ((ssl.certFile === '') !== (ssl.keyFile === '')) {
    const missing = ssl.certFile === '' ? 'certFile (env KAFKA_SSL_CERT_FILE)' : 'keyFile (env KAFKA_SSL_KEY_FILE)';
    problems.push(`kafka.ssl.${missing}: a client certificate needs both kafka.ssl.certFile and kafka.ssl.keyFile`);
  }
  const { mechanism } = sasl;
  if (mechanism === 'OAUTHBEARER') {
    if (sasl.tokenProvider === '') problems.push('kafka.sasl.tokenProvider: OAUTHBEARER needs a token provider module (env KAFKA_SASL_TOKEN_PROVIDER)');
  } else if (mechanism !== '') {
    if (sasl.username === '') problems.push(`kafka.sasl.username: ${mechanism} needs a username (env KAFKA_SASL_USERNAME)`);
    if (sasl.password === '') problems.push(`kafka.sasl.password: ${mechanism} needs a password (env KAFKA_SASL_PASSWORD)`);
  }
  if (mechanism !== 'OAUTHBEARER' && sasl.tokenProvider !== '') {
    problems.push('kafka.sasl.tokenProvider: only used with kafka.sasl.mechanism OAUTHBEARER');
  }
  if (mechanism === '' && (sasl.username !== '' || sasl.password !== '')) {
    problems.push('kafka.sasl.mechanism: a username or password is set but no mechanism (env KAFKA_SASL_MECHANISM: PLAIN, SCRAM-SHA-256, SCRAM-SHA-512)');
  }
  return problems;
}
