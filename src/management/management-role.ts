import { ManagementAuth } from '../auth/management-auth.js';
import type { NodeContext, RoleHandle } from '../node-context.js';
import { LicenseRepo } from '../storage/license-repo.js';
import { registerConfigApi } from './config-api.js';
import { registerSigningKeysApi } from './signing-keys-api.js';
import { SigningKeyRepo } from '../storage/signing-key-repo.js';

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
  });
  registerSigningKeysApi(ctx.router, {
    auth: new ManagementAuth(ctx.keys, ctx.topology),
    signingKeys: new SigningKeyRepo(ctx.sql),
    bus: ctx.bus,
    maxBodyBytes: ctx.config.server.maxManagementBodyBytes,
  });
  return { drain: async () => {} };
}
