import { ServiceError } from '../errors.js';
import type { Exchange } from '../http/exchange.js';
import type { KeyProfile } from './api-key.js';
import type { KeyAuthenticator } from './key-authenticator.js';
import type { TopologyRepo, WorkspaceRow } from '../storage/topology-repo.js';
import type { MemberRole, MembershipRepo } from '../storage/membership-repo.js';
import { JwtRejected, type ConsoleJwtVerifier } from './console-jwt.js';
import { readCookie } from '../http/cookies.js';
import { SESSION_COOKIE, type ConsoleSessions, type ResolvedSession } from './console-sessions.js';
import { crossOriginRefused, crossOriginWrite } from './same-origin.js';

/** A caller authenticated by an API key. */
export interface Principal {
  kind: 'key';
  keyId: string;
  licenseId: string;
  licensePublicId: string;
  /** A key scoped to one workspace may only touch that one. */
  workspaceId: string | null;
  profile: KeyProfile;
}

/** A signed-in console user: the identity provider's `sub`, mapped to memberships. */
export interface ConsolePrincipal {
  kind: 'console';
  subject: string;
  email: string | null;
  /** A one-time-link session: this role on this one workspace, instead of memberships. */
  grant?: { workspaceId: string; licenseId: string; licensePublicId: string; role: MemberRole };
}

/** The console's session cookie as a management credential (src/auth/console-sessions.ts). */
export interface CookieSessions {
  sessions: ConsoleSessions;
  /** console.publicUrl: what the same-origin check compares with ('' = the Host header). */
  publicUrl: string;
}

/** Who is calling /waas/*: an API key or a console session. */
export type Caller = Principal | ConsolePrincipal;

export type Permission = 'configure' | 'connect';

/** What a /waas/* operation needs on a workspace. */
export type Access = 'read' | 'write';

const PERMISSIONS: Record<KeyProfile, readonly Permission[]> = {
  ingress: [],
  full: ['configure'],
  build: ['configure', 'connect'],
};

const WRITERS: readonly MemberRole[] = ['Owner', 'Admin'];

/**
 * Management authentication (docs/api.md#authentication): `X-Api-Key: qak_…` or
 * `Authorization: Bearer qak_…`, with `X-License-PublicId` naming the key's
 * license; or, on /waas/*, a console session `Authorization: Bearer <JWT>`
 * (a bearer that does not start with `qak_`). Resources outside the caller's
 * reach answer 404, never 403, so their existence does not leak.
 */
export class ManagementAuth {
  private readonly keys: KeyAuthenticator;
  private readonly topology: TopologyRepo;
  private readonly console: { verifier: ConsoleJwtVerifier; memberships: MembershipRepo } | null;
  private readonly cookies: CookieSessions | null;
  constructor(
    keys: KeyAuthenticator,
    topology: TopologyRepo,
    console: { verifier: ConsoleJwtVerifier; memberships: MembershipRepo } | null = null,
    cookies: CookieSessions | null = null,
  ) {
    this.keys = keys;
    this.topology = topology;
    this.console = console;
    this.cookies = cookies;
  }

  /** An API key, or a console session cookie exchanged for one. */
  async authenticate(exchange: Exchange): Promise<Principal> {
    const viaCookie = await this.cookieCaller(exchange);
    if (viaCookie) {
      if (viaCookie.kind === 'key') return viaCookie;
      throw new ServiceError('unauthorized', 'This operation needs an API key, or a console session signed in with one.');
    }
    const bearer = bearerOf(exchange);
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

  /** An API key, a console session cookie or a console bearer token (the /waas/* API, /v1 workspaces). */
  async authenticateCaller(exchange: Exchange): Promise<Caller> {
    const viaCookie = await this.cookieCaller(exchange);
    if (viaCookie) return viaCookie;
    const bearer = bearerOf(exchange);
    if (exchange.headers['x-api-key'] === undefined && bearer !== undefined && !bearer.startsWith('qak_')) {
      if (!this.console?.verifier.enabled) throw new ServiceError('unauthorized', 'Console sessions are not configured on this server.');
      try {
        const session = await this.console.verifier.verify(bearer);
        return { kind: 'console', subject: session.subject, email: session.email };
      } catch (err) {
        if (err instanceof JwtRejected) throw new ServiceError('unauthorized', err.message);
        throw err;
      }
    }
    return this.authenticate(exchange);
  }

  /** True when the caller sent credentials at all (accept works without them). */
  hasCredentials(exchange: Exchange): boolean {
    return exchange.headers['x-api-key'] !== undefined || bearerOf(exchange) !== undefined || this.sessionToken(exchange) !== null;
  }

  /**
   * The caller a console session cookie stands for, or null when the request
   * carries other credentials (they win: a header is never sent by a page of
   * another origin) or no cookie. A cookie-authenticated write from another
   * origin is refused before the session is even looked up (CSRF).
   */
  private async cookieCaller(exchange: Exchange): Promise<Caller | null> {
    const token = this.sessionToken(exchange);
    if (token === null) return null;
    if (crossOriginWrite(exchange, this.cookies!.publicUrl)) throw crossOriginRefused();
    const resolved = await this.cookies!.sessions.resolve(token);
    if (!resolved) throw new ServiceError('unauthorized', 'The console session has expired or was signed out; sign in again.');
    return callerOfSession(resolved);
  }

  private sessionToken(exchange: Exchange): string | null {
    if (!this.cookies || exchange.headers['x-api-key'] !== undefined || exchange.headers.authorization !== undefined) return null;
    const token = readCookie(exchange.headers.cookie, SESSION_COOKIE);
    return token ? token : null;
  }

  require(principal: Principal, permission: Permission): void {
    if (!PERMISSIONS[principal.profile].includes(permission)) {
      throw new ServiceError('missing_permission', `A key of profile ${principal.profile} cannot do this.`);
    }
  }

  /** The workspace named in the path, if the principal may see it; 404 otherwise. */
  async workspace(principal: Principal, tenantPublicId: string): Promise<WorkspaceRow> {
    const ws = await this.topology.workspaceByPublicId(tenantPublicId);
    if (!ws || !keyReaches(principal, ws)) throw new ServiceError('not_found', 'No such workspace.');
    return ws;
  }

  /**
   * The workspace a /waas/* operation addresses, checked for the caller:
   * writes need a key with Connect permissions (a Build key; others get 403
   * missing_permission before anything is looked up) or the Owner/Admin role;
   * a workspace the caller cannot reach is 404 whichever it is.
   */
  async waasWorkspace(caller: Caller, tenantPublicId: string, access: Access): Promise<WorkspaceRow> {
    if (caller.kind === 'key') {
      if (access === 'write') this.require(caller, 'connect');
      return this.workspace(caller, tenantPublicId);
    }
    const ws = await this.topology.workspaceByPublicId(tenantPublicId);
    const role = ws ? await this.roleOf(caller, ws.id) : null;
    if (!ws || role === null) throw new ServiceError('not_found', 'No such workspace.');
    if (access === 'write' && !WRITERS.includes(role)) {
      throw new ServiceError('missing_permission', `The ${role} role cannot change this workspace; Owner or Admin can.`);
    }
    return ws;
  }

  /**
   * The workspace a /v1 configuration call addresses (docs/api.md#configuration-api: same auth
   * as /waas/*): an API key needs the `configure` permission to write (profile
   * full or build), a console user the Owner or Admin role; anything the caller
   * cannot reach is 404. Returns the caller's key profile, or `build` for a
   * console writer (Owners and Admins may create keys of any profile).
   */
  async configWorkspace(exchange: Exchange, tenantPublicId: string): Promise<{ ws: WorkspaceRow; profile: KeyProfile; caller: Caller }> {
    const caller = await this.authenticateCaller(exchange);
    const write = exchange.method !== 'GET';
    if (caller.kind === 'key') {
      if (write) this.require(caller, 'configure');
      return { ws: await this.workspace(caller, tenantPublicId), profile: caller.profile, caller };
    }
    const ws = await this.waasWorkspace(caller, tenantPublicId, write ? 'write' : 'read');
    return { ws, profile: 'build', caller };
  }

  /**
   * Who may create a workspace in the license (`POST /v1/licenses/{license}/workspaces`):
   * a key of that license not scoped to one workspace with the `configure`
   * permission (full or build), or a console user who is Owner of one of its
   * workspaces. Another license is 404, as for reads.
   */
  async licenseCreator(exchange: Exchange, licensePublicId: string): Promise<{ licenseId: string; caller: Caller }> {
    const caller = await this.authenticateCaller(exchange);
    const scope = await this.licenseScopeOf(caller, licensePublicId);
    if (caller.kind === 'key') {
      this.require(caller, 'configure');
      if (caller.workspaceId !== null) throw new ServiceError('missing_permission', 'A key scoped to one workspace cannot create workspaces; use a key of the whole license.');
      return { licenseId: scope.licenseId, caller };
    }
    // A one-time-link session reaches its one workspace only: a new one would be out of its reach.
    const owner = !caller.grant && this.console !== null && (await this.console.memberships.ownsLicense(scope.licenseId, caller.subject));
    if (!owner) throw new ServiceError('missing_permission', 'Only an Owner of the license can create workspaces.');
    return { licenseId: scope.licenseId, caller };
  }

  /**
   * What of a license the caller may read (`GET /v1/licenses/{lic}/…`): its id
   * and the workspaces within reach (null: every one, for a key not scoped to
   * a workspace). Another license, or one where a console user has no role,
   * is 404. Reads only: any key profile, any role.
   */
  async licenseScope(exchange: Exchange, licensePublicId: string): Promise<{ licenseId: string; workspaceIds: string[] | null }> {
    return this.licenseScopeOf(await this.authenticateCaller(exchange), licensePublicId);
  }

  /** licenseScope for a caller already authenticated. */
  async licenseScopeOf(caller: Caller, licensePublicId: string): Promise<{ licenseId: string; workspaceIds: string[] | null }> {
    if (caller.kind === 'key') {
      if (caller.licensePublicId !== licensePublicId) throw new ServiceError('not_found', 'No such license.');
      return { licenseId: caller.licenseId, workspaceIds: caller.workspaceId === null ? null : [caller.workspaceId] };
    }
    // A one-time-link session reaches its one workspace, and through it the license's home page.
    if (caller.grant) {
      if (caller.grant.licensePublicId !== licensePublicId) throw new ServiceError('not_found', 'No such license.');
      return { licenseId: caller.grant.licenseId, workspaceIds: [caller.grant.workspaceId] };
    }
    const found = this.console ? await this.console.memberships.workspacesInLicense(licensePublicId, caller.subject) : null;
    if (!found) throw new ServiceError('not_found', 'No such license.');
    return found;
  }

  /** Like waasWorkspace, for a workspace already loaded; false instead of throwing 404. */
  async reaches(caller: Caller, ws: WorkspaceRow, access: Access): Promise<boolean> {
    if (caller.kind === 'key') {
      if (access === 'write') this.require(caller, 'connect');
      return keyReaches(caller, ws);
    }
    const role = await this.roleOf(caller, ws.id);
    if (role === null) return false;
    if (access === 'write' && !WRITERS.includes(role)) {
      throw new ServiceError('missing_permission', `The ${role} role cannot change this workspace; Owner or Admin can.`);
    }
    return true;
  }

  /**
   * True when the caller owns or administers the license (accepting an
   * integration onto it): a Build key of that license, or a console user who
   * is Owner or Admin of one of its workspaces.
   */
  async administersLicense(caller: Caller, licensePublicId: string, licenseId: string | null): Promise<boolean> {
    if (caller.kind === 'key') {
      if (caller.licensePublicId !== licensePublicId) return false;
      this.require(caller, 'connect');
      return true;
    }
    if (caller.grant) return licenseId !== null && caller.grant.licenseId === licenseId && WRITERS.includes(caller.grant.role);
    return licenseId !== null && this.console !== null && this.console.memberships.administersLicense(licenseId, caller.subject);
  }

  private async roleOf(caller: ConsolePrincipal, workspaceId: string): Promise<MemberRole | null> {
    if (caller.grant) return caller.grant.workspaceId === workspaceId ? caller.grant.role : null;
    return this.console ? this.console.memberships.role(workspaceId, caller.subject) : null;
  }
}

/** A key session is its key's principal; link and OIDC sessions are console users. */
function callerOfSession({ session, key, workspace }: ResolvedSession): Caller {
  if (key) {
    return { kind: 'key', keyId: key.keyId, licenseId: key.licenseId, licensePublicId: key.licensePublicId, workspaceId: key.workspaceId, profile: key.profile };
  }
  if (workspace) {
    return { kind: 'console', subject: session.subject, email: null, grant: { workspaceId: workspace.id, licenseId: workspace.licenseId, licensePublicId: workspace.licensePublicId, role: session.role! } };
  }
  return { kind: 'console', subject: session.subject, email: session.email };
}

function bearerOf(exchange: Exchange): string | undefined {
  return /^Bearer\s+(.+)$/i.exec(exchange.headers.authorization ?? '')?.[1]?.trim();
}

function keyReaches(principal: Principal, ws: WorkspaceRow): boolean {
  return ws.licenseId === principal.licenseId && (principal.workspaceId === null || principal.workspaceId === ws.id);
}
