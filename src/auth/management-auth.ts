import { ServiceError } from '../errors.js';
import type { Exchange } from '../http/exchange.js';
import type { KeyProfile } from './api-key.js';
import type { KeyAuthenticator } from './key-authenticator.js';
import type { TopologyRepo, WorkspaceRow } from '../storage/topology-repo.js';

/** Who is calling the management API. */
export interface Principal {
  kind: 'key';
  keyId: string;
  licenseId: string;
  licensePublicId: string;
  /** A key scoped to one workspace may only touch that one. */
  workspaceId: string | null;
  profile: KeyProfile;
}

export type Permission = 'configure' | 'connect';

const PERMISSIONS: Record<KeyProfile, readonly Permission[]> = {
  ingress: [],
  full: ['configure'],
  build: ['configure', 'connect'],
};

/**
 * Management authentication (contract §2): `X-Api-Key: qak_…` or
 * `Authorization: Bearer qak_…`, with `X-License-PublicId` naming the key's
 * license. Resources outside the caller's reach answer 404, never 403, so
 * their existence does not leak.
 */
export class ManagementAuth {
  constructor(
    private readonly keys: KeyAuthenticator,
    private readonly topology: TopologyRepo,
  ) {}

  async authenticate(exchange: Exchange): Promise<Principal> {
    const bearer = /^Bearer\s+(.+)$/i.exec(exchange.headers.authorization ?? '')?.[1];
    const presented = exchange.headers['x-api-key'] ?? bearer;
    if (!presented) throw new ServiceError('unauthorized', 'Send an API key in X-Api-Key (or Authorization: Bearer) with X-License-PublicId.');
    let key;
    try {
      key = await this.keys.authenticate(presented.trim());
    } catch (err) {
      if (err instanceof ServiceError && err.code === 'invalid_api_key') throw new ServiceError('unauthorized', 'The API key is not valid.');
      throw err;
    }
    if (exchange.headers['x-license-publicid'] !== key.licensePublicId) {
      throw new ServiceError('unauthorized', 'X-License-PublicId must name the license the key belongs to.');
    }
    return {
      kind: 'key',
      keyId: key.keyId,
      licenseId: key.licenseId,
      licensePublicId: key.licensePublicId,
      workspaceId: key.workspaceId,
      profile: key.profile,
    };
  }

  require(principal: Principal, permission: Permission): void {
    if (!PERMISSIONS[principal.profile].includes(permission)) {
      throw new ServiceError('missing_permission', `A key of profile ${principal.profile} cannot do this.`);
    }
  }

  /** The workspace named in the path, if the principal may see it; 404 otherwise. */
  async workspace(principal: Principal, tenantPublicId: string): Promise<WorkspaceRow> {
    const ws = await this.topology.workspaceByPublicId(tenantPublicId);
    if (!ws || ws.licenseId !== principal.licenseId || (principal.workspaceId !== null && principal.workspaceId !== ws.id)) {
      throw new ServiceError('not_found', 'No such workspace.');
    }
    return ws;
  }
}
