import { ManagementAuth } from '../auth/management-auth.js';
import { ConsoleJwtVerifier } from '../auth/console-jwt.js';
import type { NodeContext, RoleHandle } from '../node-context.js';
import { LicenseRepo } from '../storage/license-repo.js';
import { MembershipRepo } from '../storage/membership-repo.js';
import { WaasActivationRepo } from '../storage/waas-activation-repo.js';
import { WaasBlockRepo } from '../storage/waas-block-repo.js';
import { WaasCatalogRepo } from '../storage/waas-catalog-repo.js';
import { WaasIntegrationRepo } from '../storage/waas-integration-repo.js';
import { WaasPackageRepo } from '../storage/waas-package-repo.js';
import { registerConfigApi } from './config-api.js';
import { registerWaasApi } from './waas-api.js';
import { registerSigningKeysApi } from './signing-keys-api.js';
import { SigningKeyRepo } from '../storage/signing-key-repo.js';
import { KeyRepo } from '../storage/key-repo.js';
import { QueueLookupRepo } from '../storage/queue-lookup-repo.js';
import { registerEventsApi } from './events-api.js';

/** Registers the management API routes: the configuration API (/v1) and the producer API (/waas). */
export async function startManagementRole(ctx: NodeContext): Promise<RoleHandle> {
  const auth = new ManagementAuth(ctx.keys, ctx.topology, {
    verifier: new ConsoleJwtVerifier(ctx.config.auth.console),
    memberships: new MembershipRepo(ctx.sql),
  });
  registerConfigApi(ctx.router, {
    auth,
    topology: ctx.topology,
    licenses: new LicenseRepo(ctx.sql),
    guard: ctx.guard,
    bus: ctx.bus,
    maxBodyBytes: ctx.config.server.maxManagementBodyBytes,
    defaultTimeoutMs: ctx.config.delivery.timeoutMs,
    queueLookup: new QueueLookupRepo(ctx.sql),
    keys: new KeyRepo(ctx.sql),
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
  });
  registerEventsApi(ctx, auth);
  return { drain: async () => {} };
}
