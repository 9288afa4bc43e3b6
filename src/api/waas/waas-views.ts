/**
 * What the /waas API answers for a catalog entry (stream), an integration, a
 * subscription, an activation and a package: the schemas the OpenAPI document
 * shows (components.schemas CatalogEntry, Integration, Subscription,
 * Activation, Package) and the types the functions building those answers
 * return, so the document cannot drift from the code (the OpenAPI test
 * validates real answers against them).
 */
import Type from 'typebox';
import { HISTORIES, type History } from '../../observability/distribution-series.js';
import { nullable, oneOf } from '../../schema/schema-kit.js';
import { dataOf } from '../list-views.js';

const publicId = (prefix: string) => Type.String({ pattern: `^${prefix}_` });
const SUBSCRIPTION_STATUSES = ['live', 'paused'] as const;

export const CatalogEntryView = Type.Object(
  {
    publicId: publicId('cat'),
    key: Type.String({ description: "the stream's name (its queue's name)" }),
    name: Type.String(),
    description: Type.String({ description: "'' when none was given" }),
    eventTypes: Type.Array(Type.String()),
    payloadSchema: nullable(Type.String({ description: 'exactly as applied' })),
    status: oneOf(['Published', 'Deprecated'] as const),
    packages: Type.Array(publicId('pkg'), { description: 'Active packages containing the stream' }),
  },
  { title: 'CatalogEntry', additionalProperties: false },
);

export const IntegrationView = Type.Object(
  {
    publicId: publicId('int'),
    invitedEmail: Type.String({ format: 'email' }),
    status: oneOf(['Pending', 'Active'] as const),
    receivingTenantPublicId: nullable(Type.String({ pattern: '^ten_', description: 'null until accepted' })),
    subscriptions: Type.Array(
      Type.Object({ catalogEntryPublicId: publicId('cat'), status: oneOf(SUBSCRIPTION_STATUSES) }, { additionalProperties: false }),
    ),
  },
  { title: 'Integration', additionalProperties: false },
);

export const SubscriptionView = Type.Object(
  {
    publicId: publicId('sub'),
    catalogEntryPublicId: publicId('cat'),
    status: oneOf(SUBSCRIPTION_STATUSES),
    receivingQueue: nullable(Type.String({ description: 'the queue of the receiving workspace the stream arrives on' })),
  },
  { title: 'Subscription', additionalProperties: false },
);

export const ActivationView = Type.Object(
  {
    publicId: publicId('act'),
    groupKey: Type.String(),
    status: oneOf(['Active', 'Revoked'] as const),
    integrationPublicId: publicId('int'),
  },
  { title: 'Activation', additionalProperties: false },
);

export const PackageView = Type.Object(
  {
    publicId: publicId('pkg'),
    key: Type.String({ description: 'a slug of the name, unique per producer' }),
    name: Type.String(),
    description: nullable(Type.String()),
    status: oneOf(['Active', 'archived'] as const),
    streams: Type.Array(publicId('cat')),
  },
  { title: 'Package', additionalProperties: false },
);

/** What `PUT /waas/streams` answers: the stream as applied (X-Streamgate-Change says changed or unchanged). */
export const StreamAppliedView = Type.Object(
  {
    publicId: publicId('cat'),
    key: Type.String({ description: "the stream's name (its queue's name)" }),
    status: oneOf(['Published', 'Deprecated'] as const),
  },
  { title: 'StreamApplied', additionalProperties: false },
);

/** What `POST /waas/integrations` answers (201 invited, 200 the Pending invitation re-issued): the token shown once. */
export const InvitationView = Type.Object(
  {
    publicId: publicId('int'),
    invitedEmail: Type.String(),
    status: Type.Literal('Pending'),
    inviteToken: Type.String({ pattern: '^qit_', description: 'shown once; hand it to the partner (a re-invite issues a new one, the old stops working)' }),
  },
  { title: 'Invitation', additionalProperties: false },
);

const blockedAt = () => Type.String({ format: 'date-time' });

/** What `GET /waas/producer/{tenant}/integrations/{integration}/blocks` answers: the stored blocks and the subscriptions they pause now. */
export const IntegrationBlocksView = Type.Object(
  {
    streams: Type.Array(
      Type.Object({ catalogEntryPublicId: publicId('cat'), name: Type.String(), blockedAt: blockedAt() }, { additionalProperties: false }),
      { description: 'streams the integration is blocked from' },
    ),
    packages: Type.Array(
      Type.Object({ packagePublicId: publicId('pkg'), name: Type.String(), blockedAt: blockedAt() }, { additionalProperties: false }),
      { description: 'packages the integration is blocked from' },
    ),
    pausedSubscriptions: Type.Array(
      Type.Object({ publicId: publicId('sub'), catalogEntryPublicId: publicId('cat'), status: Type.Literal('paused') }, { additionalProperties: false }),
      { description: "the integration's subscriptions a block pauses now" },
    ),
  },
  { title: 'IntegrationBlocks', additionalProperties: false },
);

/** What `POST /waas/enable-producer` answers. */
export const ProducerEnabledView = Type.Object(
  { tenantPublicId: publicId('ten'), isProducer: Type.Literal(true) },
  { title: 'ProducerEnabled', additionalProperties: false },
);

/** What `POST /waas/integrations/{integration}/accept` answers: the integration, Active, and where it was received. */
export const IntegrationAcceptedView = Type.Object(
  {
    integrationPublicId: publicId('int'),
    status: Type.Literal('Active'),
    receivingTenantPublicId: publicId('ten'),
    licensePublicId: publicId('lic'),
    buildKey: Type.Optional(Type.String({ pattern: '^qak_key_', description: "only when a new account was made: its Build key, shown once" })),
  },
  { title: 'IntegrationAccepted', additionalProperties: false },
);

/** An item of `GET /waas/integrations` (receiving side): an accepted integration received into the caller's license. */
export const ReceivedIntegrationView = Type.Object(
  {
    integrationPublicId: publicId('int'),
    producerTenantPublicId: publicId('ten'),
    receivingTenantPublicId: publicId('ten'),
    status: Type.Literal('Active'),
    subscriptions: Type.Integer({ description: 'how many streams the integration subscribes to' }),
  },
  { title: 'ReceivedIntegration', additionalProperties: false },
);

/** `GET /waas/integrations` (receiving side), oldest first. */
export const ReceivedIntegrationListView = dataOf(ReceivedIntegrationView, 'ReceivedIntegrationList');

/** What `GET /waas/producer/{tenant}/metrics/series` answers: the buckets of the history, oldest first, zero-filled. */
export const DistributionSeriesView = Type.Object(
  {
    history: oneOf(Object.keys(HISTORIES) as History[]),
    bucketSeconds: Type.Unsafe<number>({ type: 'integer', enum: Object.values(HISTORIES).map((h) => h.bucketSeconds), description: "the history's bucket" }),
    series: Type.Array(
      Type.Object(
        {
          t: Type.String({ format: 'date-time', description: 'start of the bucket' }),
          accepted: Type.Integer({ description: 'deliveries routed to a partner target' }),
          delivered: Type.Integer(),
          failed: Type.Integer({ description: 'deliveries that failed for good' }),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { title: 'DistributionSeries', additionalProperties: false },
);

/** `GET /waas/producer/{tenant}/catalog`. */
export const CatalogEntryListView = dataOf(CatalogEntryView, 'CatalogEntryList');
/** `GET /waas/producer/{tenant}/integrations`. */
export const IntegrationListView = dataOf(IntegrationView, 'IntegrationList');
/** `GET /waas/integrations/{integration}/subscriptions`. */
export const SubscriptionListView = dataOf(SubscriptionView, 'SubscriptionList');
/** `GET /waas/producer/{tenant}/activations`. */
export const ActivationListView = dataOf(ActivationView, 'ActivationList');
/** `GET /waas/producer/{tenant}/packages`. */
export const PackageListView = dataOf(PackageView, 'PackageList');
