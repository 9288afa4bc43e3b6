import type { ManagementAuth } from '../../auth/management-auth.js';
import { decodePathSegment } from '../../http/path-segment.js';
import type { Router } from '../../http/router.js';
import type { KeyRepo } from '../../storage/key-repo.js';
import type { LicenseRepo } from '../../storage/license-repo.js';
import type { LicenseKeyListView, LicenseWorkspaceListView } from './resource-views.js';
import type { Static } from 'typebox';

export interface LicenseApiDeps {
  auth: ManagementAuth;
  licenses: LicenseRepo;
  keys: KeyRepo;
}

/**
 * A license's Home page in the console (issue 14):
 *
 *   GET /v1/licenses/{license}/workspaces   { items: [{ tenantPublicId, name, archived, createdAt }] }
 *   GET /v1/licenses/{license}/keys         { items: [{ keyId, name, profile, scopes, tenantPublicId, createdAt, lastUsedAt }] }
 *
 * Only what the caller reaches: a key scoped to one workspace sees that
 * workspace and its keys; a console user the workspaces it has a role on.
 * Revoked keys are left out; never a secret. Create and revoke stay under
 * /v1/tenants/{tenant}/keys.
 */
export function registerLicenseApi(router: Router, deps: LicenseApiDeps): void {
  const opts = { maxBodyBytes: 0 };
  router.add('get', '/v1/licenses/:license/workspaces', opts, async (ex) => {
    const scope = await deps.auth.licenseScope(ex, decodePathSegment(ex.params[0]!, 'No such license.'));
    const rows = await deps.licenses.listWorkspaces(scope.licenseId, scope.workspaceIds);
    const answer: Static<typeof LicenseWorkspaceListView> = {
      items: rows.map((w) => ({ tenantPublicId: w.publicId, name: w.name, archived: w.archived, createdAt: w.createdAt.toISOString() })),
    };
    ex.sendJson(200, answer);
  });
  router.add('get', '/v1/licenses/:license/keys', opts, async (ex) => {
    const scope = await deps.auth.licenseScope(ex, decodePathSegment(ex.params[0]!, 'No such license.'));
    const keys = await deps.keys.listForLicense(scope.licenseId, scope.workspaceIds);
    const answer: Static<typeof LicenseKeyListView> = {
      items: keys.map((k) => ({
        keyId: k.keyId,
        name: k.name,
        profile: k.profile,
        scopes: k.queueScopes,
        tenantPublicId: k.tenantPublicId,
        createdAt: k.createdAt.toISOString(),
        lastUsedAt: k.lastUsedAt?.toISOString() ?? null,
      })),
    };
    ex.sendJson(200, answer);
  });
}
