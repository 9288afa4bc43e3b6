import { parseCidr } from '../net/cidr.js';
import { REMOVED_SETTINGS, type Config, type SchemaNode } from './schema.js';

/** Checks `value` against `node`; returns one message per bad path (empty when valid). */
export function validateAgainst(node: SchemaNode, value: unknown, path = ''): string[] {
  const at = path || '(root)';
  switch (node.kind) {
    case 'object': {
      if (typeof value !== 'object' || value === null || Array.isArray(value)) return [`${at}: must be an object`];
      const errors: string[] = [];
      const record = value as Record<string, unknown>;
      for (const key of Object.keys(record)) {
        if (key in node.fields) continue;
        const removed = REMOVED_SETTINGS[join(path, key)];
        errors.push(`${join(path, key)}: ${removed ?? 'unknown setting'}`);
      }
      for (const [key, child] of Object.entries(node.fields)) {
        if (!(key in record)) errors.push(`${join(path, key)}: missing`);
        else errors.push(...validateAgainst(child, record[key], join(path, key)));
      }
      return errors;
    }
    case 'int':
      if (typeof value !== 'number' || !Number.isInteger(value)) return [`${at}: must be an integer`];
      if (value < node.min || value > node.max) return [`${at}: must be between ${node.min} and ${node.max}`];
      return [];
    case 'number':
      if (typeof value !== 'number' || !Number.isFinite(value)) return [`${at}: must be a number`];
      if (value < node.min || value > node.max) return [`${at}: must be between ${node.min} and ${node.max}`];
      return [];
    case 'string':
      if (typeof value !== 'string') return [`${at}: must be a string`];
      if (node.pattern && !node.pattern.test(value)) return [`${at}: ${JSON.stringify(value)} is not valid`];
      return [];
    case 'cidr': {
      const bareAddress = node.bareAddress === true;
      if (typeof value === 'string' && parseCidr(value, { bareAddress }) !== null) return [];
      return [`${at}: ${JSON.stringify(value)} is not ${bareAddress ? 'an IP address or ' : ''}a CIDR such as 127.0.0.0/8`];
    }
    case 'boolean':
      return typeof value === 'boolean' ? [] : [`${at}: must be true or false`];
    case 'enum':
      return typeof value === 'string' && node.values.includes(value)
        ? []
        : [`${at}: must be one of ${node.values.map((v) => (v === '' ? '""' : v)).join(', ')}`];
    case 'list': {
      if (!Array.isArray(value)) return [`${at}: must be a list`];
      if (node.minItems !== undefined && value.length < node.minItems) return [`${at}: needs at least ${node.minItems} item(s)`];
      return value.flatMap((item, i) => validateAgainst(node.item, item, `${path}[${i}]`));
    }
  }
}

function join(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
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
