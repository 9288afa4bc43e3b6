import { hash } from 'node:crypto';
import { randomBytesPooled } from '../ids.js';
import type { KeyProfile } from './api-key.js';
import type { KeyAuthenticator } from './key-authenticator.js';
import type { ConsoleSessionRepo, NewSession, SessionWorkspace, StoredSession } from '../storage/console-session-repo.js';
import type { MemberRole } from '../storage/membership-repo.js';
import type { StoredKey } from '../storage/key-repo.js';

/** The session cookie's name (contract of issue 14). */
export const SESSION_COOKIE = 'sg_console';
/** How long a one-time sign-in link stays usable. */
export const LINK_TTL_SECONDS = 600;

const SESSION_TOKEN = /^sgs_[A-Za-z0-9_-]{43}$/;
const LINK_TOKEN = /^sgl_[A-Za-z0-9_-]{43}$/;

/** A key session's role on its workspaces: what the key's profile may do there. */
export const ROLE_OF_PROFILE: Record<KeyProfile, MemberRole> = { build: 'Owner', full: 'Admin', ingress: 'Member' };

/** What GET /console/api/session answers. */
export interface SessionBody {
  kind: StoredSession['kind'];
  subject: string;
  licensePublicId: string | null;
  workspaces: Array<{ tenantPublicId: string; name: string; role: MemberRole }>;
  expiresAt: string;
}

/** A live session with, for a key session, its key (not revoked), for a link session its workspace. */
export interface ResolvedSession {
  session: StoredSession;
  key: StoredKey | null;
  workspace: SessionWorkspace | null;
}

/**
 * Console sessions: opaque random tokens (256 bits) in the browser, only their
 * SHA-256 in Postgres, so a database dump signs nobody in, and a lookup by hash
 * leaks nothing through timing that would help guess a live token. Expiry is
 * absolute (console.sessionTtlSeconds from sign-in); sign-out revokes the row.
 */
export class ConsoleSessions {
  private readonly repo: ConsoleSessionRepo;
  private readonly keys: KeyAuthenticator;
  readonly ttlSeconds: number;
  constructor(
    repo: ConsoleSessionRepo,
    keys: KeyAuthenticator,
    ttlSeconds: number,
  ) {
    this.repo = repo;
    this.keys = keys;
    this.ttlSeconds = ttlSeconds;
  }

  /** Starts a session; the token goes into the cookie and nowhere else. */
  async start(s: Omit<NewSession, 'ttlSeconds'>): Promise<{ token: string; session: StoredSession }> {
    const token = `sgs_${randomBytesPooled(32).toString('base64url')}`;
    const session = await this.repo.create(tokenHash(token), { ...s, ttlSeconds: this.ttlSeconds });
    return { token, session };
  }

  /**
   * The live session a cookie value names, or null (malformed, unknown,
   * expired, signed out, or its key revoked since).
   */
  async resolve(token: string): Promise<ResolvedSession | null> {
    if (!SESSION_TOKEN.test(token)) return null;
    const session = await this.repo.live(tokenHash(token));
    if (!session) return null;
    if (session.kind === 'oidc') return { session, key: null, workspace: null };
    if (session.kind === 'link') {
      const workspace = await this.repo.workspace(session.workspaceId!);
      return workspace ? { session, key: null, workspace } : null;
    }
    const key = await this.keys.lookup(session.keyId!);
    return key && !key.revoked ? { session, key, workspace: null } : null;
  }

  /** Ends the session of this cookie value (a malformed or unknown one: nothing to do). */
  async revoke(token: string): Promise<void> {
    if (SESSION_TOKEN.test(token)) await this.repo.revoke(tokenHash(token));
  }

  /** A one-time link token for a role on a workspace (its hash is stored). */
  async createLink(workspaceId: string, role: MemberRole): Promise<{ token: string; expiresAt: Date }> {
    return createLinkToken(this.repo, workspaceId, role);
  }

  /** Uses a link token up; null when malformed, unknown, used or expired. */
  async consumeLink(token: string): Promise<{ workspaceId: string; role: MemberRole } | null> {
    if (!LINK_TOKEN.test(token)) return null;
    return this.repo.consumeLink(tokenHash(token));
  }

  async workspace(workspaceId: string): Promise<SessionWorkspace | null> {
    return this.repo.workspace(workspaceId);
  }

  /** The session body the console shows: who is signed in, and where with which role. */
  async body({ session, key, workspace }: ResolvedSession): Promise<SessionBody> {
    let licensePublicId: string | null = null;
    let workspaces: SessionBody['workspaces'] = [];
    if (key) {
      licensePublicId = key.licensePublicId;
      const role = ROLE_OF_PROFILE[key.profile];
      workspaces = (await this.repo.workspacesOfLicense(key.licenseId, key.workspaceId)).map((w) => ({ tenantPublicId: w.tenantPublicId, name: w.name, role }));
    } else if (workspace) {
      licensePublicId = workspace.licensePublicId;
      workspaces = [{ tenantPublicId: workspace.tenantPublicId, name: workspace.name, role: session.role! }];
    } else {
      workspaces = (await this.repo.memberships(session.subject)).map((w) => ({ tenantPublicId: w.tenantPublicId, name: w.name, role: w.role }));
    }
    return { kind: session.kind, subject: session.subject, licensePublicId, workspaces, expiresAt: session.expiresAt.toISOString() };
  }
}

/** Creates a one-time link token (also used by the CLI and the first run, without a running node). */
export async function createLinkToken(repo: ConsoleSessionRepo, workspaceId: string, role: MemberRole): Promise<{ token: string; expiresAt: Date }> {
  const token = `sgl_${randomBytesPooled(32).toString('base64url')}`;
  const expiresAt = await repo.createLink(tokenHash(token), workspaceId, role, LINK_TTL_SECONDS);
  return { token, expiresAt };
}

/** The URL a one-time link token signs in at. */
export function linkUrl(base: string, token: string): string {
  return `${base.replace(/\/+$/, '')}/console/auth/link?token=${token}`;
}

function tokenHash(token: string): Buffer {
  return hash('sha256', token, 'buffer');
}
