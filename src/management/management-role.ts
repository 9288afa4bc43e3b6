import { ManagementAuth } from '../auth/management-auth.js';
import type { NodeContext, RoleHandle } from '../node-context.js';
import { LicenseRepo } from '../storage/license-repo.js';
import { QueueLookupRepo } from '../storage/queue-lookup-repo.js';
import { registerConfigApi } from './config-api.js';
import { registerEventsApi } from './events-api.js';

/** Registers the management API routes (configuration API; /waas/* later). */
export async function startManagementRole(ctx: NodeContext): Promise<RoleHandle> {
  registerConfigApi(ctx.router, {
    auth: new ManagementAuth(ctx.keys, ctx.topology),
    topology: ctx.topology,
    licenses: new LicenseRepo(ctx.sql),
    guard: ctx.guard,
    bus: ctx.bus,
    maxBodyBytes: ctx.config.server.maxManagementBodyBytes,
    defaultTimeoutMs: ctx.config.delivery.timeoutMs,
    queueLookup: new QueueLookupRepo(ctx.sql),
  });
  registerEventsApi(ctx, new ManagementAuth(ctx.keys, ctx.topology));
  return { drain: async () => {} };
}
