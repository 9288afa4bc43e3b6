/**
 * The configuration schema: every key streamgate reads, its type and its bounds;
 * the `Config` type is inferred from it. Defaults live in config/default.yaml
 * (commented); this file only says what is valid, so a bad value fails at boot
 * with the key's path in the message.
 */

export type Role = 'ingress' | 'delivery' | 'management';
/** SASL mechanisms streamgate configures ('' = no SASL). */
export type KafkaSaslMechanism = '' | 'PLAIN' | 'SCRAM-SHA-256' | 'SCRAM-SHA-512' | 'OAUTHBEARER';
export const KAFKA_SASL_MECHANISMS: readonly KafkaSaslMechanism[] = ['', 'PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512', 'OAUTHBEARER'];
export const ROLES: readonly Role[] = ['ingress', 'delivery', 'management'];

/*
 * The schema language: one node per setting. The builders keep literal types
 * (enum values, object fields), so `Config` below is inferred from the schema
 * itself: one source for what a setting is, what bounds it has and what type
 * the code reads.
 */
export interface IntNode { kind: 'int'; min: number; max: number }
export interface NumberNode { kind: 'number'; min: number; max: number }
/** An IP network such as 10.0.0.0/8; with bareAddress, a lone address (that host only) too. */
export interface CidrNode { kind: 'cidr'; bareAddress?: boolean }
export interface BooleanNode { kind: 'boolean' }
export interface StringNode { kind: 'string'; pattern?: RegExp }
export interface EnumNode<V extends string = string> { kind: 'enum'; values: readonly V[] }
export interface ListNode<I extends Leaf = Leaf> { kind: 'list'; item: I; minItems?: number }
type Leaf = IntNode | NumberNode | CidrNode | BooleanNode | StringNode | EnumNode | ListNode<IntNode | StringNode | CidrNode | EnumNode>;
export interface ObjectNode<F extends Record<string, SchemaNode> = Record<string, SchemaNode>> { kind: 'object'; fields: F }

/** A schema node is either a leaf or an object of further nodes. */
export type SchemaNode = Leaf | ObjectNode;

/** The value a node accepts, as the code reads it. */
export type Infer<N> = N extends IntNode | NumberNode
  ? number
  : N extends StringNode | CidrNode
    ? string
    : N extends BooleanNode
      ? boolean
      : N extends EnumNode<infer V>
        ? V
        : N extends ListNode<infer I>
          ? Array<Infer<I>>
          : N extends ObjectNode<infer F>
            ? { [K in keyof F]: Infer<F[K]> }
            : never;

const int = (min: number, max: number): IntNode => ({ kind: 'int', min, max });
const num = (min: number, max: number): NumberNode => ({ kind: 'number', min, max });
const str = (pattern?: RegExp): StringNode => (pattern ? { kind: 'string', pattern } : { kind: 'string' });
const bool = (): BooleanNode => ({ kind: 'boolean' });
const cidr = (bareAddress?: boolean): CidrNode => (bareAddress ? { kind: 'cidr', bareAddress } : { kind: 'cidr' });
const oneOf = <const V extends string>(values: readonly V[]): EnumNode<V> => ({ kind: 'enum', values });
const list = <I extends IntNode | StringNode | CidrNode | EnumNode>(item: I, minItems?: number): ListNode<I> =>
  minItems === undefined ? { kind: 'list', item } : { kind: 'list', item, minItems };
const obj = <F extends Record<string, SchemaNode>>(fields: F): ObjectNode<F> => ({ kind: 'object', fields });

const HOST_PORT = /^[^\s:,]+:\d{1,5}$/;

/**
 * Settings that existed once: a file or environment that still sets one is
 * refused with what to do instead, rather than a bare "unknown setting".
 */
export const REMOVED_SETTINGS: Readonly<Record<string, string>> = {
  'embeddedLog.retentionHours': 'moved to retention.hours (env STREAMGATE_RETENTION_HOURS), which the Kafka topic and the embedded log both follow',
  'server.headerGuard':
    '(in a config file, or env STREAMGATE_HEADER_GUARD) was removed: the HTTP server always parses requests itself, strictly (there is no second HTTP stack to guard any more); delete the setting (docs/http-server.md)',
};

export const schema = obj({
  roles: list(oneOf(ROLES), 1),
  dataDir: str(/^.+$/),
  server: obj({
    port: int(0, 65535),
    host: str(),
    maxBodyBytes: int(1, 64 * 1024 * 1024),
    maxManagementBodyBytes: int(1024, 16 * 1024 * 1024),
    drainDelayMs: int(0, 600_000),
    shutdownTimeoutMs: int(1_000, 600_000),
    // CIDRs (or addresses) whose PROXY protocol header (v1 or v2) must open each of their connections.
    proxyProtocolFrom: list(cidr(true)),
    /** Deadlines for slow clients: the whole head, the whole body, an idle kept-alive connection. */
    headTimeoutMs: int(1_000, 600_000),
    bodyTimeoutMs: int(1_000, 3_600_000),
    idleTimeoutMs: int(1_000, 3_600_000),
    /** 0: GET /metrics on the public port; otherwise a separate listener on this port serves it. */
    metricsPort: int(0, 65535),
    /** JavaScript threads serving the node (0: the cores the process may use); see docs/threads.md. */
    threads: int(0, 256),
  }),
  database: obj({ url: str(/^(postgres(ql)?:\/\/.*)?$/), embeddedPort: int(1, 65535), maxConnections: int(1, 500), connectTimeoutMs: int(100, 60_000), requestTimeoutMs: int(100, 60_000) }),
  redis: obj({ url: str(/^(rediss?:\/\/.*)?$/), keyPrefix: str(), commandTimeoutMs: int(50, 10_000) }),
  kafka: obj({
    brokers: list(str(HOST_PORT)),
    clientId: str(/^[\w.-]+$/),
    topic: str(/^[\w.-]{1,249}$/),
    partitions: int(1, 10_000),
    replicationFactor: int(1, 32),
    groupId: str(/^[\w.-]+$/),
    sessionTimeoutMs: int(6_000, 300_000),
    heartbeatIntervalMs: int(100, 60_000),
    producer: obj({
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
    ssl: obj({
      enabled: bool(),
      caFile: str(),
      certFile: str(),
      keyFile: str(),
      serverName: str(/^[^\s]*$/),
      rejectUnauthorized: bool(),
    }),
    sasl: obj({
      mechanism: oneOf(KAFKA_SASL_MECHANISMS),
      username: str(),
      // No pattern: a pattern's message quotes the value, and this one is a secret.
      password: str(),
      tokenProvider: str(),
    }),
  }),
  /** How long the service keeps what it knows of an event (docs/operations.md#retention); decimals allowed (0.02 = 72 s). */
  retention: obj({
    hours: num(0.001, 1_000_000),
    // The Postgres retention sweep (management role, src/jobs/retention-sweep.ts): how often, and rows per DELETE.
    sweepIntervalMs: int(1_000, 86_400_000),
    deleteBatchRows: int(1, 100_000),
  }),
  embeddedLog: obj({ partitions: int(1, 1024), batchSize: int(1, 100_000), pollMs: int(1, 10_000) }),
  ingress: obj({
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
  delivery: obj({
    allowNetworks: list(cidr()),
    allowLoopbackInSingleNode: bool(),
    timeoutMs: int(100, 600_000),
    maxResponseBytes: int(0, 16 * 1024 * 1024),
    maxPendingPerPartition: int(1, 10_000_000),
    commitIntervalMs: int(1, 60_000),
    maxSocketsPerOrigin: int(1, 10_000),
    // Flow control per target (docs/flow-control.md): defaults of target.maxConcurrency and target.maxRatePerSecond (0: none).
    flow: obj({ maxConcurrency: int(1, 10_000), maxRatePerSecond: num(0, 100_000), initialConcurrency: int(1, 10_000), maxPauseMs: int(0, 3_600_000) }),
    // A PEM file of CAs https: receivers may chain to, trusted besides the default ones ('' for none).
    tls: obj({ caFile: str() }),
    retry: obj({
      scheduleSeconds: list(int(0, 7 * 86_400), 1),
      horizonSeconds: int(0, 30 * 86_400),
      holdInMemoryMs: int(0, 60_000),
    }),
    parking: obj({
      pageSize: int(1, 10_000),
      maxConcurrentDrains: int(1, 100_000),
      flushMs: int(0, 10_000),
      sweepMs: int(1_000, 3_600_000),
      redeliveryPollMs: int(50, 600_000),
    }),
    attemptLog: obj({ flushMs: int(1, 60_000), maxBatch: int(1, 100_000), maxBuffered: int(1, 10_000_000) }),
    sandboxSpeedup: int(1, 1_000_000),
    oauthRefreshMarginSeconds: int(0, 3_600),
    disableAfterFailingSeconds: int(1, 365 * 86_400),
  }),
  log: obj({
    level: oneOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
    // The share of management requests written to the access log, 0 to 1.
    accessLog: obj({ sampleRate: num(0, 1) }),
  }),
  auth: obj({
    console: obj({
      issuer: str(),
      audience: str(),
      jwksUrl: str(/^$|^https?:\/\//),
      publicKeyPem: str(/^$|-----BEGIN [A-Z ]+-----/),
      sharedSecret: str(),
      algorithms: list(oneOf(['RS256', 'ES256', 'EdDSA', 'HS256']), 1),
      clockToleranceMs: int(0, 600_000),
      jwksCacheTtlMs: int(1_000, 86_400_000),
    }),
  }),
  waas: obj({ metricsFlushMs: int(10, 60_000), gateViewTtlSeconds: int(1, 7 * 86_400) }),
  /** The web console (src/api/console/, docs/console.md). */
  console: obj({
    /** The built app ('' = dist/console of this package). */
    dir: str(),
    /** The origin browsers reach the console at ('' = http:// and the request's Host). */
    publicUrl: str(/^$|^https?:\/\/[^\s/?#]+$/),
    sessionTtlSeconds: int(60, 30 * 86_400),
    /** For OIDC sign-in with a confidential client ('' = a public client, PKCE only). */
    oidcClientSecret: str(),
  }),
  health: obj({ intervalMs: int(100, 600_000), timeoutMs: int(50, 600_000) }),
  metrics: obj({ enabled: bool(), token: str(/^[\x21-\x7e]*$/), perTarget: bool(), maxTargets: int(1, 10_000), eventLoopResolutionMs: int(10, 10_000) }),
});

/** Every setting, as the code reads it (validated and frozen by loadConfig). */
export type Config = Infer<typeof schema>;
/** The web console (src/api/console/, docs/console.md). */
export type ConsoleConfig = Config['console'];
