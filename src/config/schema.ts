/**
 * The configuration schema: every key streamgate reads, its type and its bounds.
 * Defaults live in config/default.yaml (commented); this file only says what is
 * valid, so a bad value fails at boot with the key's path in the message.
 */

export type Role = 'ingress' | 'delivery' | 'management';
/** SASL mechanisms streamgate configures ('' = no SASL). */
export type KafkaSaslMechanism = '' | 'PLAIN' | 'SCRAM-SHA-256' | 'SCRAM-SHA-512' | 'OAUTHBEARER';
export const KAFKA_SASL_MECHANISMS: readonly KafkaSaslMechanism[] = ['', 'PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512', 'OAUTHBEARER'];
export const ROLES: readonly Role[] = ['ingress', 'delivery', 'management'];

export interface Config {
  roles: Role[];
  dataDir: string;
  server: {
    port: number;
    host: string;
    maxBodyBytes: number;
    maxManagementBodyBytes: number;
    drainDelayMs: number;
    shutdownTimeoutMs: number;
    proxyProtocolFrom: string[];
    /** Deadlines for slow clients: the whole head, the whole body, an idle kept-alive connection. */
    headTimeoutMs: number;
    bodyTimeoutMs: number;
    idleTimeoutMs: number;
    /** 0: GET /metrics on the public port; otherwise a separate listener on this port serves it. */
    metricsPort: number;
    /** JavaScript threads serving the node (0: the cores the process may use); see docs/threads.md. */
    threads: number;
  };
  database: { url: string; embeddedPort: number; maxConnections: number; connectTimeoutMs: number; requestTimeoutMs: number };
  redis: { url: string; keyPrefix: string; commandTimeoutMs: number };
  kafka: {
    brokers: string[];
    clientId: string;
    topic: string;
    partitions: number;
    replicationFactor: number;
    groupId: string;
    sessionTimeoutMs: number;
    heartbeatIntervalMs: number;
    producer: {
      lingerMs: number;
      maxBatch: number;
      retryMs: number;
      unreachableMs: number;
      requestTimeoutMs: number;
      connectTimeoutMs: number;
      maxBatchBytes: number;
    };
    ssl: { enabled: boolean; caFile: string; certFile: string; keyFile: string; serverName: string; rejectUnauthorized: boolean };
    sasl: { mechanism: KafkaSaslMechanism; username: string; password: string; tokenProvider: string };
  };
  embeddedLog: { partitions: number; retentionHours: number; batchSize: number; pollMs: number };
  ingress: {
    keyMaxBytes: number;
    cacheTtlMs: number;
    validation: 'inline' | 'pool';
    validationThreads: number;
    validationBatchMax: number;
    signatureSkewSeconds: number;
    paymentsToleranceSeconds: number;
    hopBudget: number;
    dedupWindowSeconds: number;
    idempotencyKeyMaxBytes: number;
    idempotencyPendingTtlMs: number;
    idempotencyWaitMs: number;
    mappedHeaderMaxBytes: number;
  };
  delivery: {
    allowNetworks: string[];
    allowLoopbackInSingleNode: boolean;
    timeoutMs: number;
    maxResponseBytes: number;
    maxPendingPerPartition: number;
    commitIntervalMs: number;
    maxSocketsPerOrigin: number;
    flow: { maxConcurrency: number; maxRatePerSecond: number; initialConcurrency: number; maxPauseMs: number };
    tls: { caFile: string };
    retry: { scheduleSeconds: number[]; horizonSeconds: number; holdInMemoryMs: number };
    parking: { pageSize: number; maxConcurrentDrains: number; flushMs: number; sweepMs: number; redeliveryPollMs: number };
    attemptLog: { flushMs: number; maxBatch: number; maxBuffered: number };
    sandboxSpeedup: number;
    oauthRefreshMarginSeconds: number;
    disableAfterFailingSeconds: number;
  };
  log: {
    level: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
    accessLog: { sampleRate: number };
  };
  auth: {
    console: {
      issuer: string;
      audience: string;
      jwksUrl: string;
      publicKeyPem: string;
      sharedSecret: string;
      algorithms: Array<'RS256' | 'ES256' | 'EdDSA' | 'HS256'>;
      clockToleranceMs: number;
      jwksCacheTtlMs: number;
    };
  };
  waas: { metricsFlushMs: number; gateViewTtlSeconds: number };
  console: ConsoleConfig;
  health: { intervalMs: number; timeoutMs: number };
  metrics: { enabled: boolean; token: string; perTarget: boolean; maxTargets: number; eventLoopResolutionMs: number };
}

/** The web console (src/api/console/, docs/console.md). */
export interface ConsoleConfig {
  /** The built app ('' = dist/console of this package). */
  dir: string;
  /** The origin browsers reach the console at ('' = http:// and the request's Host). */
  publicUrl: string;
  sessionTtlSeconds: number;
  /** For OIDC sign-in with a confidential client ('' = a public client, PKCE only). */
  oidcClientSecret: string;
}

type Leaf =
  | { kind: 'int'; min: number; max: number }
  | { kind: 'number'; min: number; max: number }
  /** An IP network such as 10.0.0.0/8; with bareAddress, a lone address (that host only) too. */
  | { kind: 'cidr'; bareAddress?: boolean }
  | { kind: 'boolean' }
  | { kind: 'string'; pattern?: RegExp }
  | { kind: 'enum'; values: readonly string[] }
  | { kind: 'list'; item: Leaf; minItems?: number };

/** A schema node is either a leaf or an object of further nodes. */
export type SchemaNode = Leaf | { kind: 'object'; fields: Record<string, SchemaNode> };

const int = (min: number, max: number): Leaf => ({ kind: 'int', min, max });
const str = (pattern?: RegExp): Leaf => (pattern ? { kind: 'string', pattern } : { kind: 'string' });
const obj = (fields: Record<string, SchemaNode>): SchemaNode => ({ kind: 'object', fields });
const HOST_PORT = /^[^\s:,]+:\d{1,5}$/;

/**
 * Settings that existed once: a file or environment that still sets one is
 * refused with what to do instead, rather than a bare "unknown setting".
 */
export const REMOVED_SETTINGS: Readonly<Record<string, string>> = {
  'server.headerGuard':
    '(in a config file, or env STREAMGATE_HEADER_GUARD) was removed: the HTTP server always parses requests itself, strictly (there is no second HTTP stack to guard any more); delete the setting (docs/http-server.md)',
};

export const schema: SchemaNode = obj({
  roles: { kind: 'list', item: { kind: 'enum', values: ROLES }, minItems: 1 },
  dataDir: str(/^.+$/),
  server: obj({
    port: int(0, 65535),
    host: str(),
    maxBodyBytes: int(1, 64 * 1024 * 1024),
    maxManagementBodyBytes: int(1024, 16 * 1024 * 1024),
    drainDelayMs: int(0, 600_000),
    shutdownTimeoutMs: int(1_000, 600_000),
    // CIDRs (or addresses) whose PROXY protocol header (v1 or v2) must open each of their connections.
    proxyProtocolFrom: { kind: 'list', item: { kind: 'cidr', bareAddress: true } },
    headTimeoutMs: int(1_000, 600_000),
    bodyTimeoutMs: int(1_000, 3_600_000),
    idleTimeoutMs: int(1_000, 3_600_000),
    metricsPort: int(0, 65535),
    threads: int(0, 256),
  }),
  database: obj({ url: str(/^(postgres(ql)?:\/\/.*)?$/), embeddedPort: int(1, 65535), maxConnections: int(1, 500), connectTimeoutMs: int(100, 60_000), requestTimeoutMs: int(100, 60_000) }),
  redis: obj({ url: str(/^(rediss?:\/\/.*)?$/), keyPrefix: str(), commandTimeoutMs: int(50, 10_000) }),
  kafka: obj({
    brokers: { kind: 'list', item: str(HOST_PORT) },
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
      enabled: { kind: 'boolean' },
      caFile: str(),
      certFile: str(),
      keyFile: str(),
      serverName: str(/^[^\s]*$/),
      rejectUnauthorized: { kind: 'boolean' },
    }),
    sasl: obj({
      mechanism: { kind: 'enum', values: KAFKA_SASL_MECHANISMS },
      username: str(),
      // No pattern: a pattern's message quotes the value, and this one is a secret.
      password: str(),
      tokenProvider: str(),
    }),
  }),
  embeddedLog: obj({ partitions: int(1, 1024), retentionHours: int(1, 100_000), batchSize: int(1, 100_000), pollMs: int(1, 10_000) }),
  ingress: obj({
    keyMaxBytes: int(1, 65_536),
    cacheTtlMs: int(0, 3_600_000),
    validation: { kind: 'enum', values: ['inline', 'pool'] },
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
    allowNetworks: { kind: 'list', item: { kind: 'cidr' } },
    allowLoopbackInSingleNode: { kind: 'boolean' },
    timeoutMs: int(100, 600_000),
    maxResponseBytes: int(0, 16 * 1024 * 1024),
    maxPendingPerPartition: int(1, 10_000_000),
    commitIntervalMs: int(1, 60_000),
    maxSocketsPerOrigin: int(1, 10_000),
    // Flow control per target (docs/flow-control.md): defaults of target.maxConcurrency and target.maxRatePerSecond (0: none).
    flow: obj({ maxConcurrency: int(1, 10_000), maxRatePerSecond: { kind: 'number', min: 0, max: 100_000 }, initialConcurrency: int(1, 10_000), maxPauseMs: int(0, 3_600_000) }),
    // A PEM file of CAs https: receivers may chain to, trusted besides the default ones ('' for none).
    tls: obj({ caFile: str() }),
    retry: obj({
      scheduleSeconds: { kind: 'list', item: int(0, 7 * 86_400), minItems: 1 },
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
    level: { kind: 'enum', values: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] },
    // The share of management requests written to the access log, 0 to 1.
    accessLog: obj({ sampleRate: { kind: 'number', min: 0, max: 1 } }),
  }),
  auth: obj({
    console: obj({
      issuer: str(),
      audience: str(),
      jwksUrl: str(/^$|^https?:\/\//),
      publicKeyPem: str(/^$|-----BEGIN [A-Z ]+-----/),
      sharedSecret: str(),
      algorithms: { kind: 'list', item: { kind: 'enum', values: ['RS256', 'ES256', 'EdDSA', 'HS256'] }, minItems: 1 },
      clockToleranceMs: int(0, 600_000),
      jwksCacheTtlMs: int(1_000, 86_400_000),
    }),
  }),
  waas: obj({ metricsFlushMs: int(10, 60_000), gateViewTtlSeconds: int(1, 7 * 86_400) }),
  console: obj({
    dir: str(),
    publicUrl: str(/^$|^https?:\/\/[^\s/?#]+$/),
    sessionTtlSeconds: int(60, 30 * 86_400),
    oidcClientSecret: str(),
  }),
  health: obj({ intervalMs: int(100, 600_000), timeoutMs: int(50, 600_000) }),
  metrics: obj({ enabled: { kind: 'boolean' }, token: str(/^[\x21-\x7e]*$/), perTarget: { kind: 'boolean' }, maxTargets: int(1, 10_000), eventLoopResolutionMs: int(10, 10_000) }),
});
