/** Shapes of the API answers the console reads (docs/api.md). */

export type Role = 'Owner' | 'Admin' | 'Member';

export interface SessionWorkspace {
  tenantPublicId: string;
  name: string;
  role: Role;
}

export interface Session {
  kind: 'key' | 'link' | 'oidc';
  subject: string;
  licensePublicId: string | null;
  workspaces: SessionWorkspace[];
  expiresAt: string;
}

export interface SourceRef {
  source: 'header' | 'query' | 'body';
  name: string;
}

export interface MappedHeader {
  from: SourceRef;
  as: string;
  required: boolean;
}

export interface Queue {
  publicId: string;
  name: string;
  authMode: 'api_key' | 'signed_request' | 'payments' | 'standard_webhooks' | 'github' | 'shopify';
  ingress: 'accepting' | 'closed';
  archived: boolean;
  paymentsSecretSet: boolean;
  sourceSecretSet: boolean;
  ipAllowlist: string[];
  groupKeyRequired: boolean;
  eventType?: SourceRef;
  groupKey?: SourceRef;
  partitionKey?: SourceRef;
  mappedHeaders: MappedHeader[];
  outboundSigning: 'none' | 'hmac' | 'standard';
  paymentsSignatureRecalculation: boolean;
  hopBudget: number;
  dedupWindowSeconds: number;
  state?: 'accepting' | 'closed' | 'archived' | 'paused';
  pausedReason?: string | null;
}

export type TargetAuth =
  | { mode: 'none' }
  | { mode: 'bearer'; token?: string }
  | { mode: 'basic'; username: string; password?: string }
  | { mode: 'oauth2'; tokenUrl: string; clientId: string; clientSecret?: string; scope?: string };

export interface RetryPolicy {
  scheduleSeconds: number[];
  horizonSeconds: number;
  retryableStatuses: number[];
}

export interface Target {
  publicId: string;
  name: string;
  url: string;
  auth: TargetAuth;
  staticHeaders: Record<string, string>;
  timeoutMs: number;
  groupKeyHeader: string | null;
  retryPolicy: RetryPolicy | null;
  disabled: boolean;
  disabledReason: string | null;
  disabledAt?: string | null;
}

export interface Route {
  queue: string;
  target: string;
}

export type DeliveryStatus = 'pending' | 'delivered' | 'retrying' | 'failed' | 'blocked';

export interface EventListItem {
  eventId: string;
  receivedAt: string;
  eventType: string | null;
  partitionKey: string | null;
  targets: Array<{ target: string; status: DeliveryStatus; attempts: number; lastAttemptAt: string | null; lastStatus: number | null }>;
}

export interface Attempt {
  at: string;
  status: number | null;
  durationMs: number | null;
  error: string | null;
}

export interface EventDetail {
  eventId: string;
  queue: string;
  eventType: string | null;
  groupKey: string | null;
  partitionKey: string | null;
  idempotencyKey: string | null;
  receivedAt: string;
  headers?: Record<string, string> | Array<[string, string]> | Array<{ name: string; value: string }>;
  body?: string | null;
  bodyBase64?: string | null;
  bodyEncoding?: string;
  contentType?: string | null;
  deliveries: Array<{ target: string | null; targetPublicId: string | null; status: DeliveryStatus; attempts: Attempt[] }>;
}

export interface ApiKey {
  keyId: string;
  name: string | null;
  profile: 'ingress' | 'full' | 'build';
  scopes?: string[] | null;
  queueScopes?: string[] | null;
  tenantPublicId: string | null;
  createdAt: string;
  lastUsedAt: string | null;
}

export interface Workspace {
  tenantPublicId: string;
  name: string;
  createdAt?: string;
}

export interface Items<T> {
  items: T[];
}

export interface Data<T> {
  data: T[];
}

/** GET /v1/tenants/{t}/target-health: one target's health (docs/api.md#target-health). */
export interface TargetHealth {
  target: string;
  publicId: string;
  state: 'active' | 'failing' | 'warning' | 'disabled';
  failingSince: string | null;
  warnsAt: string | null;
  disablesAt: string | null;
  disabledAt: string | null;
  disabledReason: string | null;
  consecutiveFailures: number;
  lastError: string | null;
  lastErrorAt: string | null;
  lastSuccessAt: string | null;
  attempts: number;
  successRate: number | null;
  latencyMsMean: number | null;
  latencyMsMax: number | null;
}

export interface TargetHealthList {
  window: '1h' | '24h' | '7d';
  warnAfterFailingSeconds: number;
  disableAfterFailingSeconds: number;
  items: TargetHealth[];
}

/** GET /v1/tenants/{t}/redelivery-jobs/{id}: a bulk redelivery or replay job. */
export interface RedeliveryJob {
  jobId: string;
  kind: 'failed' | 'replay';
  status: 'running' | 'done' | 'failed' | 'cancelled';
  total: number;
  done: number;
  failed: number;
  from: string;
  to: string;
  error: string | null;
  createdAt: string;
  finishedAt: string | null;
}

/** GET /v1/tenants/{t}/activity: one entry of the workspace's activity feed. */
export interface ActivityEntry {
  id: string;
  at: string;
  kind: string;
  actor: string;
  subject: string | null;
  detail: string | null;
}

/** `GET /v1/tenants/{t}/stats` (docs/console-api.md#stats). */
export type StatsWindow = '1h' | '24h' | '7d';
export type AttemptClass = '2xx' | '3xx' | '4xx' | '5xx' | 'timeout' | 'network';

export interface StatsPoint {
  t: string;
  accepted: number;
  delivered: number;
  retrying: number;
  failed: number;
  latencyP50Ms: number | null;
  latencyP99Ms: number | null;
}

export interface StatsTotals extends Omit<StatsPoint, 't'> {
  attempts: Record<AttemptClass | 'total', number>;
  attemptShares: Record<AttemptClass, number>;
}

export interface StatsSeries {
  totals: StatsTotals;
  series: StatsPoint[];
}

export interface Stats {
  window: StatsWindow;
  stepSeconds: number;
  from: string;
  to: string;
  queue: string | null;
  total: StatsSeries;
  queues: Array<StatsSeries & { name: string }>;
}
