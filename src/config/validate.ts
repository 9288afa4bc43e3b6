import { parseCidr } from '../net/cidr.js';
import type { Config, SchemaNode } from './schema.js';

/** Checks `value` against `node`; returns one message per bad path (empty when valid). */
export function validateAgainst(node: SchemaNode, value: unknown, path = ''): string[] {
  const at = path || '(root)';
  switch (node.kind) {
    case 'object': {
      if (typeof value !== 'object' || value === null || Array.isArray(value)) return [`${at}: must be an object`];
      const errors: string[] = [];
      const record = value as Record<string, unknown>;
      for (const key of Object.keys(record)) {
        if (!(key in node.fields)) errors.push(`${join(path, key)}: unknown setting`);
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
        : [`${at}: must be one of ${node.values.join(', ')}`];
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
  return problems;
}
