import Type, { type Static } from 'typebox';
import { actorOf } from '../../activity/activity-kinds.js';
import type { ManagementAuth } from '../../auth/management-auth.js';
import { decodePathSegment } from '../../http/path-segment.js';
import type { Router } from '../../http/router.js';
import { compileBody } from '../../schema/body-validator.js';
import { closed, withProblem } from '../../schema/schema-kit.js';
import type { ActivityRepo } from '../../storage/activity-repo.js';
import type { LicenseRepo } from '../../storage/license-repo.js';
import type { MembershipRepo } from '../../storage/membership-repo.js';
import { readBody } from '../json-body.js';
import type { WorkspaceView } from './resource-views.js';

export interface WorkspaceCreateApiDeps {
  auth: ManagementAuth;
  licenses: LicenseRepo;
  memberships: MembershipRepo;
  activity: ActivityRepo;
  maxBodyBytes: number;
}

/** The body of `POST /v1/licenses/{license}/workspaces`. */
export const WorkspaceInput = closed(
  { name: withProblem(Type.String({ minLength: 1, maxLength: 100, pattern: '\\S' }), 'must be 1 to 100 characters, not only spaces') },
  { title: 'WorkspaceInput', description: 'A new workspace of the license: its name (shown in the console; need not be unique).' },
);
const checkWorkspaceInput = compileBody(WorkspaceInput);

/**
 * New workspaces (issue 26):
 *
 *   POST /v1/licenses/{license}/workspaces  { name } → 201 the workspace (as GET /v1/tenants/{tenant} shows it)
 *
 * For a key of the license not scoped to a workspace, of profile full or
 * build, or a console user who is Owner of one of the license's workspaces
 * (who becomes Owner of the new one too). A key of another license, or a
 * user with no role in it, gets 404; a Member or Admin, an ingress key or a
 * workspace-scoped key 403 missing_permission. The new workspace is empty,
 * with the service's defaults, and its activity starts with its creation.
 */
export function registerWorkspaceCreateApi(router: Router, deps: WorkspaceCreateApiDeps): void {
  router.add('post', '/v1/licenses/:license/workspaces', { maxBodyBytes: deps.maxBodyBytes, body: checkWorkspaceInput }, async (ex) => {
    const licensePublicId = decodePathSegment(ex.params[0]!, 'No such license.');
    const { licenseId, caller } = await deps.auth.licenseCreator(ex, licensePublicId);
    const name = (await readBody(ex, checkWorkspaceInput)).name.trim();
    const ws = await deps.licenses.createWorkspace(licenseId, name);
    if (caller.kind === 'console') await deps.memberships.grant(ws.id, caller.subject, 'Owner');
    await deps.activity.record(ws.id, { kind: 'workspace.created', actor: actorOf(caller), subject: ws.publicId, detail: name });
    const answer: Static<typeof WorkspaceView> = {
      publicId: ws.publicId,
      licensePublicId,
      name,
      archived: false,
      isProducer: false,
      ingress: { eventType: null, groupKey: null, partitionKey: null },
      defaultAuthMode: 'api_key',
      retentionHours: null,
    };
    ex.sendJson(201, answer);
  });
}
