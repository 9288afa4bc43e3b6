import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import type { Config } from './schema.js';
import { checkConfig } from './validate.js';

/** Raised when configuration is invalid; the CLI prints it and exits 1. */
export class ConfigError extends Error {
  readonly problems: string[];
  constructor(problems: string[]) {
    super(`invalid configuration:\n  ${problems.join('\n  ')}`);
    this.problems = problems;
  }
}

export const DEFAULTS_FILE = fileURLToPath(new URL('../../config/default.yaml', import.meta.url));

type Env = Record<string, string | undefined>;
type Plain = Record<string, unknown>;

/**
 * Loads configuration in the order the contract fixes: commented defaults, the
 * file named by STREAMGATE_CONFIG, the environment, then `overrides` (CLI flags,
 * tests). Validated once, then deep-frozen so nothing changes it at run time.
 */
export function loadConfig(env: Env = process.env, overrides: Plain = {}): Readonly<Config> {
  let merged = readYaml(DEFAULTS_FILE);
  if (env.STREAMGATE_CONFIG) merged = deepMerge(merged, readYaml(env.STREAMGATE_CONFIG));
  merged = deepMerge(merged, fromEnv(env));
  merged = deepMerge(merged, overrides);
  const checked = checkConfig(merged);
  if (!checked.ok) throw new ConfigError(checked.problems);
  return deepFreeze(checked.config);
}

function readYaml(file: string): Plain {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError([`cannot read ${file}: ${(err as Error).message}`]);
  }
  const parsed: unknown = parseYaml(text);
  if (parsed === null || parsed === undefined) return {};
  if (typeof parsed !== 'object' || Array.isArray(parsed)) throw new ConfigError([`${file}: top level must be a mapping`]);
  return parsed as Plain;
}

/** The environment variables the contract names, mapped onto config paths. */
function fromEnv(env: Env): Plain {
  const out: Plain = {};
  const set = (path: string, value: unknown) => {
    const keys = path.split('.');
    let node = out;
    for (const key of keys.slice(0, -1)) node = (node[key] ??= {}) as Plain;
    node[keys[keys.length - 1]!] = value;
  };
  const list = (v: string) => v.split(',').map((s) => s.trim()).filter(Boolean);
  // Only plain decimal digits are a port; anything else is kept as text so
  // validation names it instead of Number() turning '' into 0 or '0x1f90' into 8080.
  const integer = (v: string) => (/^\d+$/.test(v.trim()) ? Number(v.trim()) : v);
  const decimal = (v: string) => (/^\d+(\.\d+)?$/.test(v.trim()) ? Number(v.trim()) : v);
  if (env.PORT !== undefined && env.PORT !== '') set('server.port', integer(env.PORT));
  // Kept only to refuse it clearly (REMOVED_SETTINGS): the setting is gone.
  if (env.STREAMGATE_HEADER_GUARD !== undefined) set('server.headerGuard', env.STREAMGATE_HEADER_GUARD);
  if (env.DATABASE_URL) set('database.url', env.DATABASE_URL);
  if (env.REDIS_URL) set('redis.url', env.REDIS_URL);
  if (env.KAFKA_BROKERS) set('kafka.brokers', list(env.KAFKA_BROKERS));
  if (env.STREAMGATE_ALLOW_NETWORKS !== undefined) set('delivery.allowNetworks', list(env.STREAMGATE_ALLOW_NETWORKS));
  if (env.STREAMGATE_DELIVERY_CA_FILE !== undefined) set('delivery.tls.caFile', env.STREAMGATE_DELIVERY_CA_FILE);
  if (env.LOG_LEVEL) set('log.level', env.LOG_LEVEL);
  if (env.STREAMGATE_ACCESS_LOG_SAMPLE_RATE) {
    // A decimal number, else kept as text for validation to name.
    const rate = env.STREAMGATE_ACCESS_LOG_SAMPLE_RATE.trim();
    set('log.accessLog.sampleRate', /^\d*\.?\d+$/.test(rate) ? Number(rate) : rate);
  }
  if (env.STREAMGATE_REDIS_PREFIX) set('redis.keyPrefix', env.STREAMGATE_REDIS_PREFIX);
  if (env.STREAMGATE_DATA_DIR) set('dataDir', env.STREAMGATE_DATA_DIR);
  if (env.STREAMGATE_RETENTION_HOURS !== undefined && env.STREAMGATE_RETENTION_HOURS !== '') set('retention.hours', decimal(env.STREAMGATE_RETENTION_HOURS));
  if (env.STREAMGATE_METRICS_PORT !== undefined && env.STREAMGATE_METRICS_PORT !== '') set('server.metricsPort', integer(env.STREAMGATE_METRICS_PORT));
  if (env.STREAMGATE_THREADS !== undefined && env.STREAMGATE_THREADS !== '') set('server.threads', integer(env.STREAMGATE_THREADS));
  if (env.STREAMGATE_KEY_ENCRYPTION_KEY !== undefined) set('signing.keyEncryptionKey', env.STREAMGATE_KEY_ENCRYPTION_KEY);
  if (env.STREAMGATE_PREVIOUS_KEY_ENCRYPTION_KEYS !== undefined) set('signing.previousKeyEncryptionKeys', list(env.STREAMGATE_PREVIOUS_KEY_ENCRYPTION_KEYS));
  if (env.STREAMGATE_METRICS_TOKEN !== undefined) set('metrics.token', env.STREAMGATE_METRICS_TOKEN);
  if (env.STREAMGATE_KAFKA_TOPIC) set('kafka.topic', env.STREAMGATE_KAFKA_TOPIC);
  if (env.STREAMGATE_KAFKA_GROUP) set('kafka.groupId', env.STREAMGATE_KAFKA_GROUP);
  // Kafka TLS and SASL. An empty variable clears the setting (so a deployment
  // can switch off what a config file turned on); KAFKA_SSL takes true/false.
  const flag = (v: string) => (v.trim() === 'true' ? true : v.trim() === 'false' ? false : v);
  if (env.KAFKA_SSL !== undefined && env.KAFKA_SSL !== '') set('kafka.ssl.enabled', flag(env.KAFKA_SSL));
  const kafkaText: Array<[string, string]> = [
    ['KAFKA_SSL_CA_FILE', 'kafka.ssl.caFile'],
    ['KAFKA_SSL_CERT_FILE', 'kafka.ssl.certFile'],
    ['KAFKA_SSL_KEY_FILE', 'kafka.ssl.keyFile'],
    ['KAFKA_SSL_SERVER_NAME', 'kafka.ssl.serverName'],
    ['KAFKA_SASL_MECHANISM', 'kafka.sasl.mechanism'],
    ['KAFKA_SASL_USERNAME', 'kafka.sasl.username'],
    ['KAFKA_SASL_PASSWORD', 'kafka.sasl.password'],
    ['KAFKA_SASL_TOKEN_PROVIDER', 'kafka.sasl.tokenProvider'],
  ];
  for (const [name, path] of kafkaText) {
    const value = env[name];
    if (value !== undefined) set(path, name === 'KAFKA_SASL_MECHANISM' ? value.trim().toUpperCase() : value);
  }
  return out;
}

function deepMerge(base: Plain, over: Plain): Plain {
  const out: Plain = { ...base };
  for (const [key, value] of Object.entries(over)) {
    const prev = out[key];
    out[key] = isPlain(prev) && isPlain(value) ? deepMerge(prev, value) : value;
  }
  return out;
}

function isPlain(v: unknown): v is Plain {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}
