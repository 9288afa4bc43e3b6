/**
 * What the configuration API answers for a workspace, a queue and a target:
 * the schemas the OpenAPI document shows (components.schemas Workspace, Queue,
 * QueueWithState, Target) and the types the view functions return, so the document cannot say
 * one thing while the code sends another (the OpenAPI test validates real
 * answers against them).
 */
import Type from 'typebox';
import type { KeyProfile } from '../../auth/api-key.js';
import type { SigningAlgorithm } from '../../storage/signing-key-repo.js';
import { AUTH_MODES, INGRESS_STATES } from '../../routing/queue-settings.js';
import { nullable, oneOf } from '../../schema/schema-kit.js';
import { OUTBOUND_SIGNING, SourceRefBody } from './queue-input.js';
import { RetryPolicyInput } from './target-input.js';
import { dataOf, itemsOf } from '../list-views.js';

const time = (options: { description?: string } = {}) => Type.String({ format: 'date-time', ...options });
const publicId = (prefix: string) => Type.String({ pattern: `^${prefix}_` });

export const WorkspaceView = Type.Object(
  {
    publicId: publicId('ten'),
    licensePublicId: publicId('lic'),
    name: Type.String(),
    archived: Type.Boolean(),
    isProducer: Type.Boolean(),
    ingress: Type.Object(
      { eventType: Type.Union([SourceRefBody, Type.Null()]), groupKey: Type.Union([SourceRefBody, Type.Null()]), partitionKey: Type.Union([SourceRefBody, Type.Null()]) },
      { additionalProperties: false, description: 'where a queue that names none reads each value (null: the X-Service-* header)' },
    ),
    defaultAuthMode: oneOf(['api_key', 'signed_request'] as const),
    retentionHours: nullable(Type.Number({ description: "the workspace's own retention in hours (shorter than the service's); null: the service's retention.hours" })),
  },
  { title: 'Workspace', additionalProperties: false },
);

export const QueueView = Type.Object(
  {
    publicId: publicId('que'),
    name: Type.String(),
    tenantPublicId: publicId('ten'),
    authMode: oneOf(AUTH_MODES),
    ingress: oneOf(INGRESS_STATES),
    archived: Type.Boolean(),
    paymentsSecretSet: Type.Boolean({ description: 'payments queues: whether a secret is set (the secret itself is write-only)' }),
    sourceSecretSet: Type.Boolean({ description: 'standard_webhooks, github and shopify queues: whether a source secret is set (the secret itself is write-only)' }),
    ipAllowlist: Type.Array(Type.String(), { description: 'addresses or CIDRs a sender must come from; empty: anyone (403 ip_not_allowed)' }),
    groupKeyRequired: Type.Boolean(),
    eventType: Type.Optional(SourceRefBody),
    groupKey: Type.Optional(SourceRefBody),
    partitionKey: Type.Optional(SourceRefBody),
    mappedHeaders: Type.Array(
      Type.Object({ from: SourceRefBody, as: Type.String(), required: Type.Boolean() }, { additionalProperties: false }),
      { description: 'values lifted from the request and sent to receivers as headers' },
    ),
    outboundSigning: oneOf(OUTBOUND_SIGNING),
    paymentsSignatureRecalculation: Type.Boolean(),
    hopBudget: Type.Integer({ description: 'the queue\'s own, or the configured default' }),
    dedupWindowSeconds: Type.Integer({ description: 'the queue\'s own, or the configured default' }),
    public: Type.Optional(Type.Boolean({ description: 'made by PUT /waas/streams: partners may subscribe' })),
    createdAt: time(),
    updatedAt: time(),
  },
  { title: 'Queue', additionalProperties: false },
);

/** How delivery authenticates, without its secrets (write-only). */
const TargetAuthView = Type.Object(
  {
    mode: oneOf(['none', 'bearer', 'basic', 'oauth2'] as const),
    username: Type.Optional(Type.String()),
    tokenUrl: Type.Optional(Type.String()),
    clientId: Type.Optional(Type.String()),
    scope: Type.Optional(Type.String()),
  },
  { additionalProperties: false, description: 'the mode and its non-secret parts; tokens, passwords and client secrets are never returned' },
);

export const TargetView = Type.Object(
  {
    publicId: publicId('tgt'),
    name: Type.String(),
    url: Type.String(),
    auth: TargetAuthView,
    staticHeaders: Type.Record(Type.String(), Type.String()),
    timeoutMs: Type.Integer(),
    groupKeyHeader: nullable(Type.String()),
    retryPolicy: Type.Union([Type.Null(), RetryPolicyInput], { description: 'null: the service defaults' }),
    maxConcurrency: nullable(Type.Integer({ description: 'null: delivery.flow.maxConcurrency' })),
    maxRatePerSecond: nullable(Type.Number({ description: 'null: delivery.flow.maxRatePerSecond' })),
    disabled: Type.Boolean(),
    disabledReason: nullable(Type.String({ description: 'why delivery disabled the target, e.g. a 410 Gone' })),
    disabledAt: nullable(time()),
    createdAt: time(),
    updatedAt: time(),
  },
  { title: 'Target', additionalProperties: false },
);

/** queue-state.ts's QueueState (the queue list's type check keeps the two together). */
const QUEUE_STATES = ['accepting', 'closed', 'archived', 'paused'] as const;

/** A queue as the workspace's queue list (and archive/restore) shows it: the queue and its state. */
export const QueueWithStateView = Type.Object(
  {
    ...QueueView.properties,
    state: oneOf(QUEUE_STATES),
    pausedReason: nullable(Type.String({ description: 'why the queue is paused' })),
  },
  {
    title: 'QueueWithState',
    additionalProperties: false,
    description:
      'state: archived (queue or workspace; 409 queue_archived) wins over paused (no valid mode; 409 queue_paused), which wins over closed (409 ingress_closed)',
  },
);

/** The profiles an API key has (auth/api-key.ts's KeyProfile). */
export const KEY_PROFILES = ['ingress', 'full', 'build'] as const satisfies readonly KeyProfile[];

/** What `POST /v1/tenants/{tenant}/keys` answers: the new key, its secret shown once. */
export const ApiKeyCreatedView = Type.Object(
  {
    keyId: Type.String({ pattern: '^key_' }),
    key: Type.String({ pattern: '^qak_key_', description: 'the key as sent in X-Api-Key (qak_<keyId>.<secret>); shown once, never stored' }),
    profile: oneOf(KEY_PROFILES),
    tenantPublicId: publicId('ten'),
    queueScopes: nullable(Type.Array(Type.String(), { description: 'the queues the key may send to; null: all' })),
  },
  { title: 'ApiKeyCreated', additionalProperties: false },
);

/** An item of `GET /v1/tenants/{tenant}/keys`: a key of the workspace, never its secret. */
export const ApiKeyView = Type.Object(
  {
    keyId: Type.String({ pattern: '^key_' }),
    name: nullable(Type.String()),
    profile: oneOf(KEY_PROFILES),
    queueScopes: nullable(Type.Array(Type.String(), { description: 'the queues the key may send to; null: all' })),
    createdAt: time(),
    lastUsedAt: nullable(time({ description: 'when the key last authenticated a request, to the minute' })),
    revokedAt: nullable(time()),
  },
  { title: 'ApiKey', additionalProperties: false },
);

const signingKeyId = () => Type.String({ pattern: '^sig_' });
const WHPK = (description: string) => Type.String({ pattern: '^whpk_', description });

/**
 * What `POST /v1/tenants/{tenant}/signing-keys` answers: an HMAC key with its secret
 * (shown once), or an ed25519 key with its public key (never the private key).
 */
export const SigningKeyCreatedView = Type.Union(
  [
    Type.Object(
      {
        keyId: signingKeyId(),
        algorithm: Type.Literal('hmac-sha256'),
        secret: Type.String({ pattern: '^whsec_', description: 'shown once' }),
        standardSecret: Type.String({ pattern: '^whsec_', description: 'the same key as Standard Webhooks libraries take it (new Webhook(standardSecret)); shown once' }),
        tenantPublicId: publicId('ten'),
        createdAt: time(),
      },
      { additionalProperties: false },
    ),
    Type.Object(
      {
        keyId: signingKeyId(),
        algorithm: Type.Literal('ed25519'),
        publicKey: WHPK('whpk_ + standard base64 of the 32-byte raw Ed25519 public key; verifies the v1a entries of webhook-signature'),
        tenantPublicId: publicId('ten'),
        createdAt: time(),
      },
      { additionalProperties: false },
    ),
  ],
  { title: 'SigningKeyCreated', description: 'by algorithm: hmac-sha256 (secret and standardSecret) or ed25519 (publicKey)' },
);

/** An item of `GET /v1/tenants/{tenant}/signing-keys`: an active key, never a secret or a private key. */
export const SigningKeyView = Type.Object(
  {
    keyId: signingKeyId(),
    algorithm: oneOf(['hmac-sha256', 'ed25519'] as const satisfies readonly SigningAlgorithm[]),
    publicKey: Type.Optional(WHPK('ed25519 keys only: whpk_ + standard base64 of the 32-byte raw public key')),
    createdAt: time(),
  },
  { title: 'SigningKey', additionalProperties: false },
);

/** An item of `GET /v1/tenants/{tenant}/routes`: a queue → target route. */
export const RouteView = Type.Object(
  {
    queue: Type.String(),
    queuePublicId: publicId('que'),
    target: Type.String(),
    targetPublicId: publicId('tgt'),
    createdAt: time(),
  },
  { title: 'Route', additionalProperties: false },
);

/** `GET /v1/tenants/{tenant}/queues`. */
export const QueueListView = itemsOf(QueueWithStateView, 'QueueList');
/** `GET /v1/tenants/{tenant}/targets`. */
export const TargetListView = itemsOf(TargetView, 'TargetList');
/** `GET /v1/tenants/{tenant}/routes`. */
export const RouteListView = itemsOf(RouteView, 'RouteList');
/** `GET /v1/tenants/{tenant}/keys`. */
export const ApiKeyListView = dataOf(ApiKeyView, 'ApiKeyList');
/** `GET /v1/tenants/{tenant}/signing-keys`. */
export const SigningKeyListView = dataOf(SigningKeyView, 'SigningKeyList');

/** An item of `GET /v1/licenses/{license}/workspaces`: a workspace the caller reaches. */
export const LicenseWorkspaceView = Type.Object(
  { tenantPublicId: publicId('ten'), name: Type.String(), archived: Type.Boolean(), createdAt: time() },
  { title: 'LicenseWorkspace', additionalProperties: false },
);

/** An item of `GET /v1/licenses/{license}/keys`: a key that is not revoked, never its secret. */
export const LicenseKeyView = Type.Object(
  {
    keyId: Type.String({ pattern: '^key_' }),
    name: nullable(Type.String()),
    profile: oneOf(KEY_PROFILES),
    scopes: nullable(Type.Array(Type.String(), { description: 'queue scopes; null: every queue' })),
    tenantPublicId: nullable(Type.String({ pattern: '^ten_', description: 'the workspace the key is scoped to; null: every workspace of the license' })),
    createdAt: time(),
    lastUsedAt: nullable(time({ description: 'when the key last authenticated a request, to the minute' })),
  },
  { title: 'LicenseKey', additionalProperties: false },
);

/** `GET /v1/licenses/{license}/workspaces`. */
export const LicenseWorkspaceListView = itemsOf(LicenseWorkspaceView, 'LicenseWorkspaceList');
/** `GET /v1/licenses/{license}/keys`. */
export const LicenseKeyListView = itemsOf(LicenseKeyView, 'LicenseKeyList');

/** What `PUT` (200 existed, 201 created) and `GET /v1/tenants/{tenant}/queues/{name}/targets/{target}` answer: the route's two ends. */
export const RouteEndsView = Type.Object(
  { queue: Type.String(), target: Type.String() },
  { title: 'RouteEnds', additionalProperties: false, description: 'the queue and the target the route joins, by name' },
);
