import { registerWorkspaceApi } from './v1/workspace-api.js';
import { ManagementAuth } from '../auth/management-auth.js';
import { ConsoleJwtVerifier } from '../auth/console-jwt.js';
import type { NodeContext, RoleHandle } from '../node/node-context.js';
import { LicenseRepo } from '../storage/license-repo.js';
import { MembershipRepo } from '../storage/membership-repo.js';
import { WaasActivationRepo } from '../storage/waas-activation-repo.js';
import { WaasBlockRepo } from '../storage/waas-block-repo.js';
import { WaasCatalogRepo } from '../storage/waas-catalog-repo.js';
import { WaasIntegrationRepo } from '../storage/waas-integration-repo.js';
import { WaasPackageRepo } from '../storage/waas-package-repo.js';
import { registerConfigApi } from './v1/config-api.js';
import { registerWaasApi } from './waas/waas-api.js';
import { registerSigningKeysApi } from './v1/signing-keys-api.js';
import { SigningKeyRepo } from '../storage/signing-key-repo.js';
import { KeyEncryption } from '../storage/key-encryption.js';
import { KeyRepo } from '../storage/key-repo.js';
import { QueueLookupRepo } from '../storage/queue-lookup-repo.js';
import { registerEventsApi } from './events/events-api.js';
import { registerEventListApi } from './events/event-list-api.js';
import { registerLicenseApi } from './v1/license-api.js';
import { registerRedeliveryJobsApi } from './events/redelivery-jobs-api.js';
import { registerTopologyListsApi } from './v1/topology-lists-api.js';
import { ConsoleSessions } from '../auth/console-sessions.js';
import { ConsoleSessionRepo } from '../storage/console-session-repo.js';
import { OidcClient } from '../auth/oidc-client.js';
import { registerConsoleApi } from './console/console-api.js';
import { registerConsoleStatic } from './console/console-static.js';
import { ActivityRepo } from '../storage/activity-repo.js';
import { TargetHealthRepo } from '../storage/target-health-repo.js';
import { registerActivityApi } from './v1/activity-api.js';
import { registerTargetHealthApi } from './v1/target-health-api.js';
import { registerWorkspaceCreateApi } from './v1/workspace-create-api.js';
import { registerStatsApi } from './v1/stats-api.js';

/** Registers the management API routes: the configuration API (/v1) and the producer API (/waas). */
export async function startManagementRole(ctx: NodeContext): Promise<RoleHandle> {
  const verifier = new ConsoleJwtVerifier(ctx.config.auth.console);
  const consoleConfig = ctx.config.console;
  const sessions = new ConsoleSessions(new ConsoleSessionRepo(ctx.sql), ctx.keys, consoleConfig.sessionTtlSeconds);
  const memberships = new MembershipRepo(ctx.sql);
  const activity = new ActivityRepo(ctx.sql);
  const auth = new ManagementAuth(
    ctx.keys,
    ctx.topology,
    { verifier, memberships },
    { sessions, publicUrl: consoleConfig.publicUrl },
  );
  registerConfigApi(ctx.router, {
    auth,
    topology: ctx.topology,
    licenses: new LicenseRepo(ctx.sql),
    guard: ctx.guard,
    bus: ctx.bus,
    maxBodyBytes: ctx.config.server.maxManagementBodyBytes,
    defaultTimeoutMs: ctx.config.delivery.timeoutMs,
    queueDefaults: { hopBudget: ctx.config.ingress.hopBudget, dedupWindowSeconds: ctx.config.ingress.dedupWindowSeconds },
    queueLookup: new QueueLookupRepo(ctx.sql),
    keys: new KeyRepo(ctx.sql),
    activity,
  });
  registerWorkspaceApi(ctx.router, {
    auth, topology: ctx.topology, bus: ctx.bus, maxBodyBytes: ctx.config.server.maxManagementBodyBytes, retentionHours: ctx.config.retention.hours,
  });
  registerWaasApi(ctx.router, {
    auth,
    topology: ctx.topology,
    catalog: new WaasCatalogRepo(ctx.sql),
    integrations: new WaasIntegrationRepo(ctx.sql),
    activations: new WaasActivationRepo(ctx.sql),
    packages: new WaasPackageRepo(ctx.sql),
    blocks: new WaasBlockRepo(ctx.sql),
    bus: ctx.bus,
    cache: ctx.cache,
    maxBodyBytes: ctx.config.server.maxManagementBodyBytes,
    keyMaxBytes: ctx.config.ingress.keyMaxBytes,
  });
  registerSigningKeysApi(ctx.router, {
    auth,
    signingKeys: new SigningKeyRepo(ctx.sql),
    bus: ctx.bus,
    maxBodyBytes: ctx.config.server.maxManagementBodyBytes,
    keyEncryption: KeyEncryption.fromSetting(ctx.config.signing.keyEncryptionKey, ctx.config.signing.previousKeyEncryptionKeys),
  });
  registerEventsApi(ctx, auth);
  // The console's lists and bulk redelivery (issue 14).
  registerLicenseApi(ctx.router, { auth, licenses: new LicenseRepo(ctx.sql), keys: new KeyRepo(ctx.sql) });
  registerTopologyListsApi(ctx.router, {
    auth,
    topology: ctx.topology,
    signingKeys: new SigningKeyRepo(ctx.sql),
    bus: ctx.bus,
    defaultTimeoutMs: ctx.config.delivery.timeoutMs,
    queueDefaults: { hopBudget: ctx.config.ingress.hopBudget, dedupWindowSeconds: ctx.config.ingress.dedupWindowSeconds },
    activity,
  });
  // Target health, the activity feed and new workspaces (issue 26).
  registerTargetHealthApi(ctx.router, {
    auth,
    health: new TargetHealthRepo(ctx.sql),
    thresholds: { warnAfterMs: ctx.config.delivery.warnAfterFailingSeconds * 1000, disableAfterMs: ctx.config.delivery.disableAfterFailingSeconds * 1000 },
  });
  registerActivityApi(ctx.router, { auth, activity });
  registerWorkspaceCreateApi(ctx.router, {
    auth, licenses: new LicenseRepo(ctx.sql), memberships, activity, maxBodyBytes: ctx.config.server.maxManagementBodyBytes,
  });
  registerEventListApi(ctx, auth);
  // The workspace overview's traffic (issue 26).
  registerStatsApi(ctx.router, { auth, sql: ctx.sql });
  const redeliveryJobs = registerRedeliveryJobsApi(ctx, auth);
  const { issuer, audience } = ctx.config.auth.console;
  registerConsoleApi(ctx.router, {
    sessions,
    keys: ctx.keys,
    oidc: issuer ? new OidcClient({ issuer, clientId: audience, clientSecret: consoleConfig.oidcClientSecret }, verifier) : null,
    publicUrl: consoleConfig.publicUrl,
    log: ctx.log,
  });
  registerConsoleStatic(ctx.router, consoleConfig.dir);
  return { drain: () => redeliveryJobs.drain() };
}
