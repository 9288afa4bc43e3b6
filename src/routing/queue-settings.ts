/**
 * A queue's settings (docs/api.md#configuration-api), stored as JSON on the queue row and read
 * by ingress (auth, extraction, limits) and delivery (signing, headers).
 */
export type AuthMode = 'api_key' | 'signed_request' | 'payments' | SourceAuthMode;
/** Webhooks of a provider, verified with the queue's sourceSecret (docs/api.md#ingress-auth-modes). */
export type SourceAuthMode = 'standard_webhooks' | 'github' | 'shopify';
export type IngressState = 'accepting' | 'closed';
export type ValueSource = 'header' | 'query' | 'body';

/** Where a context value or mapped header is read from at accept. */
export interface SourceRef {
  source: ValueSource;
  name: string;
}

export interface MappedHeader {
  from: SourceRef;
  /** The header name it is sent under on delivery. */
  as: string;
  required: boolean;
}

export interface QueueSettings {
  authMode: AuthMode;
  ingress: IngressState;
  archived: boolean;
  /** Verifies an incoming Payments-Signature on `payments` queues (write-only). */
  paymentsSecret?: string;
  /** Verifies the provider's signature on `standard_webhooks`, `github` and `shopify` queues (write-only). */
  sourceSecret?: string;
  /** CIDRs a sender must come from; empty means anyone. */
  ipAllowlist: string[];
  groupKeyRequired: boolean;
  /** Extraction sources; unset means the default header (docs/api.md#configuration-api). */
  eventType?: SourceRef;
  groupKey?: SourceRef;
  partitionKey?: SourceRef;
  mappedHeaders: MappedHeader[];
  /** How deliveries are signed: not at all, the X-Service v1 + v2 HMAC headers, or Standard Webhooks (webhook-*). */
  outboundSigning: 'none' | 'hmac' | 'standard';
  paymentsSignatureRecalculation: boolean;
  hopBudget: number;
  dedupWindowSeconds: number;
  /** Public queue (made by PUT /waas/streams): partners may subscribe to it. */
  public?: boolean;
}

export const SOURCE_AUTH_MODES: readonly SourceAuthMode[] = ['standard_webhooks', 'github', 'shopify'];
export const AUTH_MODES: readonly AuthMode[] = ['api_key', 'signed_request', 'payments', ...SOURCE_AUTH_MODES];

export function isSourceAuthMode(mode: AuthMode): mode is SourceAuthMode {
  return (SOURCE_AUTH_MODES as readonly string[]).includes(mode);
}

/**
 * The headers (lower case) an inbound source sends beside its signature: the
 * provider's delivery id, the event's idempotency key when no Idempotency-Key
 * is sent, and the header its event type is read from unless the queue names
 * its own eventType source (docs/api.md#ingress-auth-modes).
 */
export const SOURCE_HEADERS: Readonly<Record<SourceAuthMode, { deliveryId: string; eventType: string | null }>> = Object.freeze({
  standard_webhooks: { deliveryId: 'webhook-id', eventType: null },
  github: { deliveryId: 'x-github-delivery', eventType: 'x-github-event' },
  shopify: { deliveryId: 'x-shopify-webhook-id', eventType: 'x-shopify-topic' },
});
export const INGRESS_STATES: readonly IngressState[] = ['accepting', 'closed'];
export const VALUE_SOURCES: readonly ValueSource[] = ['header', 'query', 'body'];

export const DEFAULT_QUEUE_SETTINGS: Readonly<QueueSettings> = Object.freeze({
  authMode: 'api_key',
  ingress: 'accepting',
  archived: false,
  ipAllowlist: [],
  groupKeyRequired: false,
  mappedHeaders: [],
  outboundSigning: 'none',
  paymentsSignatureRecalculation: false,
  hopBudget: 10,
  dedupWindowSeconds: 86_400,
});

/** Config defaults (ingress.hopBudget, ingress.dedupWindowSeconds) for settings a queue does not set itself. */
export interface QueueDefaults {
  hopBudget: number;
  dedupWindowSeconds: number;
}

/**
 * Fills settings stored by an older version (or never set) with today's
 * defaults: the node's configured ones when given, which is what ingress
 * applies and the API shows.
 */
export function withQueueDefaults(stored: Partial<QueueSettings>, configured?: QueueDefaults): QueueSettings {
  const settings = { ...DEFAULT_QUEUE_SETTINGS, ...stored };
  if (configured) {
    settings.hopBudget = stored.hopBudget ?? configured.hopBudget;
    settings.dedupWindowSeconds = stored.dedupWindowSeconds ?? configured.dedupWindowSeconds;
  }
  return settings;
}
