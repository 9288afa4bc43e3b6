import type { Sql } from '../../storage/db.js';
import { LicenseRepo } from '../../storage/license-repo.js';

export interface BootstrapResult {
  licensePublicId: string;
  tenantPublicId: string;
  buildKey: string;
  ingressKey: string;
}

/**
 * Creates a license, its first workspace and two keys scoped to it: a Build
 * key for the management API and an ingress key for posting events. The keys
 * are returned once; only their hashes are stored.
 */
export async function bootstrap(sql: Sql, email: string): Promise<BootstrapResult> {
  const repo = new LicenseRepo(sql);
  const license = await repo.createLicense(email);
  const workspace = await repo.createWorkspace(license.id, 'default');
  const build = await repo.createKey({ licenseId: license.id, workspaceId: workspace.id, profile: 'build', name: 'bootstrap build key' });
  const ingress = await repo.createKey({ licenseId: license.id, workspaceId: workspace.id, profile: 'ingress', name: 'bootstrap ingress key' });
  return { licensePublicId: license.publicId, tenantPublicId: workspace.publicId, buildKey: build.wire, ingressKey: ingress.wire };
}
