/**
 * The configuration schema: every key streamgate reads, its type and its bounds,
 * as TypeBox (plain JSON Schema), the same language as the API bodies
 * (src/schema/schema-kit.ts): `Config` is its static type, and the shared
 * ajv validator (src/schema/body-validator.ts, run by validate.ts) checks a
 * loaded configuration against it once at boot, naming each bad key's path.
 * Defaults live in config/default.yaml (commented), which sets every key: so
 * every key is required here, and every object is closed (a key the schema
 * does not name is an unknown or removed setting).
 */
import Type, { type Static, type TSchema } from 'typebox';
import { parseCidr } from '../net/cidr.js';
import { registerFormat } from '../schema/body-validator.js';
import { closed, int, oneOf, withProblem } from '../schema/schema-kit.js';

export type Role = 'ingress' | 'delivery' | 'management';
/** SASL mechanisms streamgate configures ('' = no SASL). */
export type KafkaSaslMechanism = '' | 'PLAIN' | 'SCRAM-SHA-256' | 'SCRAM-SHA-512' | 'OAUTHBEARER';
export const KAFKA_SASL_MECHANISMS: readonly KafkaSaslMechanism[] = ['', 'PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512', 'OAUTHBEARER'];
export const ROLES: readonly Role[] = ['ingress', 'delivery', 'management'];

/*
 * IP networks, read by src/net/cidr.ts as everywhere else (ajv formats, so
 * the schema says which). Blanks around an entry are not trimmed, unlike a
 * queue's ipAllowlist (format ip-or-cidr, a different check, hence a
 * different name): the lists are used as written, so such an entry is refused
 * at boot rather than when the list is built.
 */
/** A network such as 10.0.0.0/8 or fd00::/8 (a bare address is not one). */
export const CIDR_FORMAT = 'cidr';
/** A network, or a lone address meaning that host only. */
export const ADDRESS_OR_CIDR_FORMAT = 'address-or-cidr';
registerFormat(CIDR_FORMAT, (v) => parseCidr(v, { bareAddress: false }) !== null, 'a CIDR such as 127.0.0.0/8 (one host: 127.0.0.1/32)');
registerFormat(ADDRESS_OR_CIDR_FORMAT, (v) => parseCidr(v) !== null, 'an IP address or a CIDR such as 127.0.0.0/8');

const num = (minimum: number, maximum: number) => Type.Number({ minimum, maximum });
const str = () => Type.String();
const bool = () => Type.Boolean();
/** A string matching `pattern`, with the words an operator reads when it does not (a pattern's own words would be "has an invalid format"). */
const text = (pattern: RegExp, problem: string) => withProblem(Type.String({ pattern: pattern.source }), problem);
const cidr = () => Type.String({ format: CIDR_FORMAT });
const addressOrCidr = () => Type.String({ format: ADDRESS_OR_CIDR_FORMAT });
const list = <I extends TSchema>(item: I, minItems?: number) => (minItems === undefined ? Type.Array(item) : Type.Array(item, { minItems }));

const NAME_CHARS = 'letters, digits, ".", "_" or "-"';

/**
 * Settings that existed once: a file or environment that still sets one is
 * refused with what to do instead, rather than a bare "unknown setting".
 */
export const REMOVED_SETTINGS: Readonly<Record<string, string>> = {
  'embeddedLog.retentionHours': 'moved to retention.hours (env STREAMGATE_RETENTION_HOURS), which the Kafka topic and the embedded log both follow',
  'server.headerGuard':
    '(in a config file, or env STREAMGATE_HEADER_GUARD) was removed: the HTTP server always parses requests itself, strictly (there is no second HTTP stack to guard any more); delete the setting (docs/http-server.md)',
};

export const schema = closed({
  roles: list(oneOf(ROLES), 1),
  dataDir: text(/^.+$/, 'must be a folder path (one line, not empty)'),
  server: closed({
    port: int(0, 65535),
    host: str(),
    maxBodyBytes: int(1, 64 * 1024 * 1024),
    maxManagementBodyBytes: int(1024, 16 * 1024 * 1024),
    drainDelayMs: int(0, 600_000),
    shutdownTimeoutMs: int(1_000, 600_000),
    // CIDRs (or addresses) whose PROXY protocol header (v1 or v2) must open each of their connections.
    proxyProtocolFrom: list(addressOrCidr()),
    /** Deadlines for slow clients: the whole head, the whole body, an idle kept-alive connection. */
    headTimeoutMs: int(1_000, 600_000),
    bodyTimeoutMs: int(1_000, 3_600_000),
    idleTimeoutMs: int(1_000, 3_600_000),
    /** 0: GET /metrics on the public port; otherwise a separate listener on this port serves it. */
    metricsPort: int(0, 65535),
    /** JavaScript threads serving the node (0: the cores the process may use); see docs/threads.md. */
    threads: int(0, 256),
  }),
  database: closed({
    url: text(/^(postgres(ql)?:\/\/.*)?$/, 'must be a postgres:// or postgresql:// URL, or "" for the embedded PostgreSQL'),
    embeddedPort: int(1, 65535),
    maxConnections: int(1, 500),
    connectTimeoutMs: int(100, 60_000),
    requestTimeoutMs: int(100, 60_000),
  }),
  redis: closed({ url: text(/^(rediss?:\/\/.*)?$/, 'must be a redis:// or rediss:// URL, or "" for the in-process cache'), keyPrefix: str(), commandTimeoutMs: int(50, 10_000) }),
  kafka: closed({
    brokers: list(text(/^[^\s:,]+:\d{1,5}$/, 'must be a broker as host:port, e.g. kafka-1:9092')),
    clientId: text(/^[\w.-]+$/, `must be ${NAME_CHARS}, not empty`),
    topic: text(/^[\w.-]{1,249}$/, `must be 1 to 249 ${NAME_CHARS} (a Kafka topic name)`),
    partitions: int(1, 10_000),
    replicationFactor: int(1, 32),
    groupId: text(/^[\w.-]+$/, `must be ${NAME_CHARS}, not empty`),
    sessionTimeoutMs: int(6_000, 300_000),
    heartbeatIntervalMs: int(100, 60_000),
    producer: closed({
      lingerMs: int(0, 1000),
      maxBatch: int(1, 100_000),
      retryMs: int(0, 600_000),
      unreachableMs: int(0, 600_000),
      requestTimeoutMs: int(100, 600_000),
      connectTimeoutMs: int(100, 60_000),
      // The broker refuses a batch over its message.max.bytes (1 MiB by default).
      maxBatchBytes: int(1024, 64 * 1024 * 1024),
    }),
    // Files are read (and the token provider imported) when Kafka connects; crossCheck names missing pairs.
    ssl: closed({
      enabled: bool(),
      caFile: str(),
      certFile: str(),
      keyFile: str(),
      serverName: text(/^[^\s]*$/, 'must be a host name without blanks, or "" for each broker\'s own host'),
      rejectUnauthorized: bool(),
    }),
    sasl: closed({
      mechanism: oneOf(KAFKA_SASL_MECHANISMS),
      username: str(),
      // A secret: no problem text ever quotes a setting's value.
      password: str(),
      tokenProvider: str(),
    }),
  }),
  /** How long the service keeps what it knows of an event (docs/operations.md#retention); decimals allowed (0.02 = 72 s). */
  retention: closed({
    hours: num(0.001, 1_000_000),
    // The Postgres retention sweep (management role, src/jobs/retention-sweep.ts): how often, and rows per DELETE.
    sweepIntervalMs: int(1_000, 86_400_000),
    deleteBatchRows: int(1, 100_000),
  }),
  embeddedLog: closed({ partitions: int(1, 1024), batchSize: int(1, 100_000), pollMs: int(1, 10_000) }),
  ingress: closed({
    keyMaxBytes: int(1, 65_536),
    cacheTtlMs: int(0, 3_600_000),
    validation: oneOf(['inline', 'pool']),
    validationThreads: int(1, 64),
    validationBatchMax: int(1, 100_000),
    signatureSkewSeconds: int(1, 86_400),
    paymentsToleranceSeconds: int(1, 86_400),
    hopBudget: int(1, 100),
    dedupWindowSeconds: int(0, 30 * 86_400),
    idempotencyKeyMaxBytes: int(1, 65_536),
    idempotencyPendingTtlMs: int(1_000, 3_600_000),
    idempotencyWaitMs: int(0, 600_000),
    mappedHeaderMaxBytes: int(1, 65_536),
  }),
  delivery: closed({
    allowNetworks: list(cidr()),
    allowLoopbackInSingleNode: bool(),
    timeoutMs: int(100, 600_000),
    maxResponseBytes: int(0, 16 * 1024 * 1024),
    maxPendingPerPartition: int(1, 10_000_000),
    commitIntervalMs: int(1, 60_000),
    maxSocketsPerOrigin: int(1, 10_000),
    // Flow control per target (docs/flow-control.md): defaults of target.maxConcurrency and target.maxRatePerSecond (0: none).
    flow: closed({ maxConcurrency: int(1, 10_000), maxRatePerSecond: num(0, 100_000), initialConcurrency: int(1, 10_000), maxPauseMs: int(0, 3_600_000) }),
    // A PEM file of CAs https: receivers may chain to, trusted besides the default ones ('' for none).
    tls: closed({ caFile: str() }),
    retry: closed({
      scheduleSeconds: list(int(0, 7 * 86_400), 1),
      horizonSeconds: int(0, 30 * 86_400),
      holdInMemoryMs: int(0, 60_000),
    }),
    parking: closed({
      pageSize: int(1, 10_000),
      maxConcurrentDrains: int(1, 100_000),
      flushMs: int(0, 10_000),
      sweepMs: int(1_000, 3_600_000),
      redeliveryPollMs: int(50, 600_000),
    }),
    attemptLog: closed({ flushMs: int(1, 60_000), maxBatch: int(1, 100_000), maxBuffered: int(1, 10_000_000) }),
    sandboxSpeedup: int(1, 1_000_000),
    oauthRefreshMarginSeconds: int(0, 3_600),
    disableAfterFailingSeconds: int(1, 365 * 86_400),
    // Target health (docs/delivery.md#target-health): a failing target is announced as `warning` after this long.
    warnAfterFailingSeconds: int(1, 365 * 86_400),
    // How often a delivery node adds its per-target attempt counters to the database.
    healthFlushMs: int(10, 600_000),
  }),
  log: closed({
    level: oneOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
    // The share of management requests written to the access log, 0 to 1.
    accessLog: closed({ sampleRate: num(0, 1) }),
  }),
  auth: closed({
    console: closed({
      issuer: str(),
      audience: str(),
      jwksUrl: text(/^$|^https?:\/\//, 'must be an http:// or https:// URL, or ""'),
      publicKeyPem: text(/^$|-----BEGIN [A-Z ]+-----/, 'must be a PEM public key or certificate (-----BEGIN …-----), or ""'),
      sharedSecret: str(),
      algorithms: list(oneOf(['RS256', 'ES256', 'EdDSA', 'HS256']), 1),
      clockToleranceMs: int(0, 600_000),
      jwksCacheTtlMs: int(1_000, 86_400_000),
    }),
  }),
  /** Signing keys (docs/operations.md#signing-key-encryption). */
  signing: closed({
    // A secret: encrypts ed25519 private keys at rest (AES-256-GCM). '' = no ed25519 keys (creating one answers 409).
    keyEncryptionKey: text(/^$|^\s*(?:[0-9a-fA-F]{64}|[A-Za-z0-9+/]{43}=)\s*$/, 'must be 32 bytes as 64 hex digits or standard base64 (44 characters, e.g. `openssl rand -base64 32`), or "" for none'),
    // Secrets: keys of before a rotation; they only decrypt (until `streamgate admin reencrypt-signing-keys` has run).
    previousKeyEncryptionKeys: list(text(/^\s*(?:[0-9a-fA-F]{64}|[A-Za-z0-9+/]{43}=)\s*$/, 'must be 32 bytes as 64 hex digits or standard base64 (44 characters)')),
  }),
  waas: closed({ metricsFlushMs: int(10, 60_000), gateViewTtlSeconds: int(1, 7 * 86_400) }),
  /** The web console (src/api/console/, docs/console.md). */
  console: closed({
    /** The built app ('' = dist/console of this package). */
    dir: str(),
    /** The origin browsers reach the console at ('' = http:// and the request's Host). */
    publicUrl: text(/^$|^https?:\/\/[^\s/?#]+$/, 'must be an origin such as https://streamgate.example.com (scheme, host and port; no path), or ""'),
    sessionTtlSeconds: int(60, 30 * 86_400),
    /** For OIDC sign-in with a confidential client ('' = a public client, PKCE only). */
    oidcClientSecret: str(),
  }),
  health: closed({ intervalMs: int(100, 600_000), timeoutMs: int(50, 600_000) }),
  metrics: closed({
    enabled: bool(),
    // Sent in a header: visible ASCII only.
    token: text(/^[\x21-\x7e]*$/, 'must be visible ASCII characters (no blanks), or "" for none'),
    perTarget: bool(),
    maxTargets: int(1, 10_000),
    eventLoopResolutionMs: int(10, 10_000),
  }),
});

/** Every setting, as the code reads it (validated and frozen by loadConfig). */
export type Config = Static<typeof schema>;
/** The web console (src/api/console/, docs/console.md). */
export type ConsoleConfig = Config['console'];
