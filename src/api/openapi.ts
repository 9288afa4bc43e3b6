import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import Type, { type Static } from 'typebox';
import { parse } from 'yaml';
import { AcceptedView } from '../ingress/accepted-view.js';
import { errorCatalog, type ErrorCode, type ServiceError } from '../errors.js';
import { oneOf } from '../schema/schema-kit.js';
import { ConsoleSignInInput } from './console/console-api.js';
import { ConsoleConfigView, ConsoleSessionView } from './console/console-views.js';
import { RedeliverInput } from './events/events-api.js';
import {
  AttemptView, DeliveryView, EventListItemView, EventListView, EventView, RedeliveryDryRunView, RedeliveryJobStartedView, RedeliveryJobView, RedeliveryQueuedView,
  SandboxRunView,
} from './events/event-views.js';
import { RedeliveryJobInput, ReplayInput } from './events/redelivery-jobs-api.js';
import { ActivityEntryView, ActivityListView } from './v1/activity-api.js';
import { TargetHealthListView, TargetHealthView } from './v1/target-health-api.js';
import { WorkspaceInput } from './v1/workspace-create-api.js';
import { ApiKeyInput } from './v1/config-api.js';
import { QueueInput } from './v1/queue-input.js';
import {
  ApiKeyCreatedView, ApiKeyListView, ApiKeyView, LicenseKeyListView, LicenseKeyView, LicenseWorkspaceListView, LicenseWorkspaceView, QueueListView, RouteEndsView, QueueView, QueueWithStateView, RouteListView, RouteView, SigningKeyCreatedView, SigningKeyListView,
  SigningKeyView, TargetListView, TargetView, WorkspaceView,
} from './v1/resource-views.js';
import { SigningKeyInput } from './v1/signing-keys-api.js';
import { StatsView } from './v1/stats-views.js';
import { TargetInput } from './v1/target-input.js';
import { WorkspacePatch } from './v1/workspace-api.js';
import { ActivationInput } from './waas/waas-activations.js';
import { CatalogEntryRefInput } from './waas/waas-context.js';
import { IntegrationAcceptInput, IntegrationInviteInput } from './waas/waas-integrations.js';
import { PackageInput } from './waas/waas-packages.js';
import { EnableProducerInput, StreamInput } from './waas/waas-streams.js';
import {
  ActivationListView, ActivationView, CatalogEntryListView, CatalogEntryView, DistributionSeriesView, IntegrationAcceptedView, IntegrationBlocksView, IntegrationListView,
  IntegrationView, InvitationView, PackageListView, PackageView, ProducerEnabledView, ReceivedIntegrationListView, ReceivedIntegrationView, StreamAppliedView,
  SubscriptionListView, SubscriptionView,
} from './waas/waas-views.js';

/*
 * The served OpenAPI document is put together from two sources:
 *
 *   src/api/openapi.yaml   paths, parameters, responses and their prose;
 *                          a request body is a reference by name:
 *                          `requestBody: { $ref: '#/components/requestBodies/QueueInput' }`
 *   the body schemas       (TypeBox, the ones the handlers validate with)
 *                          → components.schemas.<title> and components.requestBodies.<title>
 *   the answer schemas     (TypeBox; the functions building those answers return their Static type)
 *                          → components.schemas.<title>, which the yaml's responses $ref
 *
 * So what a route accepts and what it answers is written once, in code; the
 * OpenAPI test checks that each route's declared body (RouteOptions.body) is
 * the one its path refers to, and validates real answers against the schemas.
 */

// The document lives beside its source (tsc does not copy YAML): resolve it
// from the package root whether this runs from src/ or dist/.
const DOCUMENT = fileURLToPath(new URL('../../src/api/openapi.yaml', import.meta.url));

/** Every request body schema, by title. */
export const BODY_SCHEMAS: readonly object[] = [
  QueueInput, TargetInput, WorkspacePatch, ApiKeyInput, SigningKeyInput, RedeliverInput, RedeliveryJobInput, ConsoleSignInInput,
  StreamInput, EnableProducerInput, IntegrationInviteInput, IntegrationAcceptInput, CatalogEntryRefInput, ActivationInput, PackageInput,
  ReplayInput, WorkspaceInput,
];

/**
 * The error envelope every endpoint answers errors with (errorEnvelope in
 * src/errors.ts, docs/api.md#conventions): `ErrorAnswer` below fails to compile
 * when ServiceError carries something this schema does not allow.
 */
export const ErrorView = Type.Object(
  {
    error: Type.Object(
      {
        code: oneOf(Object.keys(errorCatalog) as ErrorCode[]),
        message: Type.String(),
        details: Type.Optional(
          Type.Union(
            [
              Type.Array(Type.Object({ field: Type.String(), problem: Type.String() }, { additionalProperties: false }), {
                description: 'validation_failed: one entry per bad field (docs/api.md#conventions)',
              }),
              Type.Record(Type.String(), Type.Unknown(), { description: 'other codes: facts about the error' }),
            ],
          ),
        ),
      },
      { additionalProperties: false },
    ),
  },
  { title: 'Error', additionalProperties: false },
);

/** What errorEnvelope makes of a ServiceError; compiles only while it fits ErrorView. */
export type ErrorAnswer = Fits<{ error: { code: ServiceError['code']; message: ServiceError['message']; details?: NonNullable<ServiceError['details']> } }, Static<typeof ErrorView>>;
type Fits<A extends B, B> = A;

/** Answers whose schema is in code (the functions building them return their Static type), by title. */
export const ANSWER_SCHEMAS: readonly object[] = [
  AcceptedView, WorkspaceView, QueueView, QueueWithStateView, QueueListView, TargetView, TargetListView, RouteEndsView, RouteView, RouteListView,
  ApiKeyCreatedView, ApiKeyView, ApiKeyListView, SigningKeyCreatedView, SigningKeyView, SigningKeyListView,
  LicenseWorkspaceView, LicenseWorkspaceListView, LicenseKeyView, LicenseKeyListView,
  AttemptView, DeliveryView, EventView, EventListItemView, EventListView, RedeliveryQueuedView, RedeliveryJobStartedView, RedeliveryDryRunView, RedeliveryJobView,
  SandboxRunView, StreamAppliedView, CatalogEntryView, InvitationView, IntegrationView, IntegrationBlocksView, SubscriptionView, ActivationView, PackageView,
  ProducerEnabledView, IntegrationAcceptedView, ReceivedIntegrationView, ReceivedIntegrationListView, DistributionSeriesView,
  CatalogEntryListView, IntegrationListView, SubscriptionListView, ActivationListView, PackageListView,
  ConsoleConfigView, ConsoleSessionView, ErrorView,
  TargetHealthView, TargetHealthListView, ActivityEntryView, ActivityListView,
  StatsView,
];

/** The OpenAPI document as JSON text, built once. */
export function openApiJson(): string {
  const doc = parse(readFileSync(DOCUMENT, 'utf8')) as { components: Record<string, Record<string, unknown>> };
  const schemas = (doc.components.schemas ??= {});
  const bodies = (doc.components.requestBodies ??= {});
  for (const schema of BODY_SCHEMAS) {
    const plain = withoutInternals(schema) as { title: string; required?: string[] };
    if (plain.title in schemas) throw new Error(`openapi.yaml defines ${plain.title}, which a body schema in code defines too`);
    schemas[plain.title] = plain;
    bodies[plain.title] = {
      // A body with no required field may be left out (treated as {}).
      required: (plain.required?.length ?? 0) > 0,
      content: { 'application/json': { schema: { $ref: `#/components/schemas/${plain.title}` } } },
    };
  }
  for (const schema of ANSWER_SCHEMAS) {
    const plain = withoutInternals(schema) as { title: string };
    if (plain.title in schemas) throw new Error(`openapi.yaml defines ${plain.title}, which an answer schema in code defines too`);
    schemas[plain.title] = plain;
  }
  return JSON.stringify(doc);
}

/** A schema as plain JSON, without our wording annotations (x-problem): those are for the validator. */
function withoutInternals(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutInternals);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(Object.entries(value).filter(([k]) => k !== 'x-problem').map(([k, v]) => [k, withoutInternals(v)]));
}

/** `/v1/tenants/:tenant/queues/:name` → `/v1/tenants/{tenant}/queues/{name}`. */
export function toOpenApiPath(pattern: string): string {
  return pattern.replace(/:([A-Za-z]\w*)/g, '{$1}');
}
