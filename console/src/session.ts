import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { Role, Session } from './types';

export interface SessionState {
  session: Session;
  signOut: () => Promise<void>;
  refresh: () => Promise<void>;
}

export const SessionContext = createContext<SessionState | null>(null);

export function useSession(): SessionState {
  const s = useContext(SessionContext);
  if (!s) throw new Error('useSession outside a signed-in page');
  return s;
}

export function roleOn(session: Session, tenant: string): Role | null {
  return session.workspaces.find((w) => w.tenantPublicId === tenant)?.role ?? null;
}

/** Owners and Admins change things; Members see everything read-only. */
export function useCanWrite(tenant: string): boolean {
  const role = roleOn(useSession().session, tenant);
  return role === 'Owner' || role === 'Admin';
}

/** Sign-in errors the server reports in `?signin_error=` (one-time link, OIDC callback). */
export const SIGNIN_ERRORS: Record<string, string> = {
  link_invalid: 'This sign-in link is invalid, expired or was already used. Ask for a new one.',
  oidc_failed: 'Signing in with your identity provider failed. Try again.',
  oidc_denied: 'Your identity provider did not sign you in.',
  no_membership: 'You have no role on any workspace yet. Ask an owner to grant you one.',
  session_expired: 'Your session has expired. Sign in again.',
};
