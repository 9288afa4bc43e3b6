/**
 * The configuration schema: every key streamgate reads, its type and its bounds.
 * Defaults live in config/default.yaml (commented); this file only says what is
 * valid, so a bad value fails at boot with the key's path in the message.
 */

export type Role = 'ingress' | 'delivery' | 'management';
export const ROLES: readonly Role[] = ['ingress', 'delivery', 'management'];

export interface Config {
  roles: Role[];
  server: {
    port: number;
    host: string;
    maxBodyBytes: number;
    maxManagementBodyBytes: number;
    drainTimeoutMs: number;
  };
  database: { url: string; maxConnections: number };
  redis: { url: string; keyPrefix: string };
  kafka: {
    brokers: string[];
    clientId: string;
    topic: string;
    partitions: number;
    replicationFactor: number;
    groupId: string;
    sessionTimeoutMs: number;
    heartbeatIntervalMs: number;
    producer: { lingerMs: number; maxBatch: number; maxInFlight: number };
  };
  ingress: { keyMaxBytes: number; cacheTtlMs: number };
  delivery: {
    allowNetworks: string[];
    timeoutMs: number;
    maxResponseBytes: number;
    maxPendingPerPartition: number;
    partitionsConcurrently: number;
    commitIntervalMs: number;
    maxSocketsPerOrigin: number;
    retry: { scheduleSeconds: number[]; horizonSeconds: number; holdInMemoryMs: number };
    parking: { pageSize: number; maxConcurrentDrains: number; flushMs: number; sweepMs: number; redeliveryPollMs: number };
    attemptLog: { flushMs: number; maxBatch: number; maxBuffered: number };
    sandboxSpeedup: number;
    oauthRefreshMarginSeconds: number;
    disableAfterFailingSeconds: number;
  };
  log: { level: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent' };
}

type Leaf =
  | { kind: 'int'; min: number; max: number }
  | { kind: 'cidr' }
  | { kind: 'string'; pattern?: RegExp }
  | { kind: 'enum'; values: readonly string[] }
  | { kind: 'list'; item: Leaf; minItems?: number };

/** A schema node is either a leaf or an object of further nodes. */
export type SchemaNode = Leaf | { kind: 'object'; fields: Record<string, SchemaNode> };

const int = (min: number, max: number): Leaf => ({ kind: 'int', min, max });
const str = (pattern?: RegExp): Leaf => (pattern ? { kind: 'string', pattern } : { kind: 'string' });
const obj = (fields: Record<string, SchemaNode>): SchemaNode => ({ kind: 'object', fields });
const HOST_PORT = /^[^\s:,]+:\d{1,5}$/;

export const schema: SchemaNode = obj({
  roles: { kind: 'list', item: { kind: 'enum', values: ROLES }, minItems: 1 },
  server: obj({
    port: int(0, 65535),
    host: str(),
    maxBodyBytes: int(1, 64 * 1024 * 1024),
    maxManagementBodyBytes: int(1024, 16 * 1024 * 1024),
    drainTimeoutMs: int(0, 600_000),
  }),
  database: obj({ url: str(/^postgres(ql)?:\/\//), maxConnections: int(1, 500) }),
  redis: obj({ url: str(/^rediss?:\/\//), keyPrefix: str() }),
  kafka: obj({
    brokers: { kind: 'list', item: str(HOST_PORT), minItems: 1 },
    clientId: str(/^[\w.-]+$/),
    topic: str(/^[\w.-]{1,249}$/),
    partitions: int(1, 10_000),
    replicationFactor: int(1, 32),
    groupId: str(/^[\w.-]+$/),
    sessionTimeoutMs: int(6_000, 300_000),
    heartbeatIntervalMs: int(100, 60_000),
    producer: obj({ lingerMs: int(0, 1000), maxBatch: int(1, 100_000), maxInFlight: int(1, 64) }),
  }),
  ingress: obj({ keyMaxBytes: int(1, 65_536), cacheTtlMs: int(0, 3_600_000) }),
  delivery: obj({
    allowNetworks: { kind: 'list', item: { kind: 'cidr' } },
    timeoutMs: int(100, 600_000),
    maxResponseBytes: int(0, 16 * 1024 * 1024),
    maxPendingPerPartition: int(1, 10_000_000),
    partitionsConcurrently: int(1, 10_000),
    commitIntervalMs: int(1, 60_000),
    maxSocketsPerOrigin: int(1, 10_000),
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
  log: obj({ level: { kind: 'enum', values: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] } }),
});
