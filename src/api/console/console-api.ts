import { readFileSync } from 'node:fs';
import { ServiceError } from '../../errors.js';
import type { Exchange } from '../../http/exchange.js';
import type { Router } from '../../http/router.js';
import { clearCookie, readCookie, setCookie } from '../../http/cookies.js';
import type { Logger } from '../../observability/logger.js';
import type { KeyAuthenticator } from '../../auth/key-authenticator.js';
import { SESSION_COOKIE, type ConsoleSessions } from '../../auth/console-sessions.js';
import { decodeFlow, encodeFlow, OidcFailed, type OidcClient } from '../../auth/oidc-client.js';
import { crossOriginRefused, crossOriginWrite, fromOwnOrigin, ownOrigin } from '../../auth/same-origin.js';
import Type, { type Static } from 'typebox';
import { compileBody } from '../../schema/body-validator.js';
import { closed } from '../../schema/schema-kit.js';
import { readBody } from '../json-body.js';
import { CONSOLE_HEADERS } from './console-static.js';
import type { ConsoleConfigView, ConsoleSessionView } from './console-views.js';

/** The body of `POST /console/api/session`: sign in with an API key of the license. */
export const ConsoleSignInInput = closed(
  { licensePublicId: Type.String({ maxLength: 100 }), key: Type.String({ maxLength: 300 }) },
  { title: 'ConsoleSignInInput', description: 'Sign in to the console with an API key of the license.' },
);
const checkSignInInput = compileBody(ConsoleSignInInput);

const VERSION = (JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
const FLOW_COOKIE = 'sg_oidc';
const FLOW_PATH = '/console/auth/oidc';
const FLOW_TTL_SECONDS = 600;
const JSON_TYPE = { 'content-type': 'application/json' };

export interface ConsoleApiDeps {
  sessions: ConsoleSessions;
  keys: KeyAuthenticator;
  /** Set when auth.console names an issuer. */
  oidc: OidcClient | null;
  /** console.publicUrl ('' = http:// and the Host header). */
  publicUrl: string;
  log: Logger;
}

/**
 * The console's sign-in endpoints (docs/console.md): the public config, the
 * session (sign in with a license id and key, read it, sign out), the one-time
 * link and the OpenID Connect flow. The cookie they set is a credential for the
 * whole management API (src/auth/management-auth.ts).
 */
export function registerConsoleApi(router: Router, deps: ConsoleApiDeps): void {
  const secure = deps.publicUrl.startsWith('https:');
  const sessionCookie = (token: string) => setCookie(SESSION_COOKIE, token, { maxAgeSeconds: deps.sessions.ttlSeconds, path: '/', sameSite: 'Strict', secure });
  const noSessionCookie = clearCookie(SESSION_COOKIE, { path: '/', sameSite: 'Strict', secure });
  const json = (ex: Exchange, status: number, value: unknown, cookie?: string) =>
    ex.send(status, JSON.stringify(value), { ...JSON_TYPE, 'cache-control': 'no-store', ...CONSOLE_HEADERS, ...(cookie ? { 'set-cookie': cookie } : {}) });
  const redirect = (ex: Exchange, location: string, cookies: string[] = []) => {
    // One Set-Cookie line per cookie (RFC 6265 §3: they cannot be joined with commas).
    const headers: Record<string, string | string[]> = { location, 'cache-control': 'no-store', ...CONSOLE_HEADERS };
    if (cookies.length > 0) headers['set-cookie'] = cookies;
    ex.send(303, '', headers);
  };

  router.add('get', '/console/api/config', { maxBodyBytes: 0 }, (ex) => {
    const answer: Static<typeof ConsoleConfigView> = { oidc: deps.oidc !== null, version: VERSION };
    json(ex, 200, answer);
  });

  router.add('post', '/console/api/session', { maxBodyBytes: 4096, body: checkSignInInput }, async (ex) => {
    // Signing a victim's browser into the attacker's license is an attack too (login CSRF).
    if (!fromOwnOrigin(ex, deps.publicUrl, true)) throw crossOriginRefused();
    const { licensePublicId, key: presented } = await readBody(ex, checkSignInInput);
    const key = await deps.keys.authenticate(presented.trim());
    if (key.licensePublicId !== licensePublicId) throw new ServiceError('invalid_api_key', 'The API key is not valid for this license.');
    const { token } = await deps.sessions.start({ kind: 'key', subject: key.keyId, keyId: key.keyId });
    json(ex, 200, await bodyOf(deps.sessions, token), sessionCookie(token));
  });

  router.add('get', '/console/api/session', { maxBodyBytes: 0 }, async (ex) => {
    const token = readCookie(ex.headers.cookie, SESSION_COOKIE);
    const body = token ? await bodyOf(deps.sessions, token) : null;
    if (!body) throw new ServiceError('unauthorized', 'Not signed in, or the session has expired or was signed out.');
    json(ex, 200, body);
  });

  router.add('del', '/console/api/session', { maxBodyBytes: 0 }, async (ex) => {
    const token = readCookie(ex.headers.cookie, SESSION_COOKIE);
    if (token && crossOriginWrite(ex, deps.publicUrl)) throw crossOriginRefused();
    if (token) await deps.sessions.revoke(token);
    ex.send(204, '', { 'set-cookie': noSessionCookie, 'cache-control': 'no-store', ...CONSOLE_HEADERS });
  });

  router.add('get', '/console/auth/link', { maxBodyBytes: 0 }, async (ex) => {
    const token = new URLSearchParams(ex.query).get('token') ?? '';
    const grant = await deps.sessions.consumeLink(token);
    const workspace = grant ? await deps.sessions.workspace(grant.workspaceId) : null;
    if (!grant || !workspace) return redirect(ex, '/console/?signin_error=link_invalid');
    const { token: session } = await deps.sessions.start({
      kind: 'link',
      subject: `link:${workspace.tenantPublicId}:${grant.role}`,
      workspaceId: grant.workspaceId,
      role: grant.role,
    });
    redirect(ex, '/console/', [sessionCookie(session)]);
  });

  const flowCookie = (value: string, maxAgeSeconds: number) =>
    // Lax, not Strict: the provider sends the browser back with a cross-site top-level GET, which must carry it.
    setCookie(FLOW_COOKIE, value, { maxAgeSeconds, path: FLOW_PATH, sameSite: 'Lax', secure });
  const redirectUri = (ex: Exchange) => `${ownOrigin(ex, deps.publicUrl)}${FLOW_PATH}/callback`;

  router.add('get', `${FLOW_PATH}/start`, { maxBodyBytes: 0 }, async (ex) => {
    if (!deps.oidc) throw new ServiceError('not_found', 'Sign-in with an identity provider is not configured (auth.console.issuer).');
    let started;
    try {
      started = await deps.oidc.start(redirectUri(ex));
    } catch (err) {
      if (!(err instanceof OidcFailed)) throw err;
      deps.log.warn({ reason: err.message }, 'console OIDC sign-in could not start');
      return redirect(ex, '/console/?signin_error=oidc_failed');
    }
    redirect(ex, started.url, [flowCookie(encodeFlow(started.flow), FLOW_TTL_SECONDS)]);
  });

  router.add('get', `${FLOW_PATH}/callback`, { maxBodyBytes: 0 }, async (ex) => {
    if (!deps.oidc) throw new ServiceError('not_found', 'Sign-in with an identity provider is not configured (auth.console.issuer).');
    const clearFlow = flowCookie('', 0);
    const flow = decodeFlow(readCookie(ex.headers.cookie, FLOW_COOKIE));
    try {
      if (!flow) throw new OidcFailed('no sign-in was started in this browser (the flow cookie is missing or expired)');
      const user = await deps.oidc.finish(new URLSearchParams(ex.query), flow, redirectUri(ex));
      const { token } = await deps.sessions.start({ kind: 'oidc', subject: user.subject, email: user.email });
      redirect(ex, '/console/', [sessionCookie(token), clearFlow]);
    } catch (err) {
      if (!(err instanceof OidcFailed)) throw err;
      deps.log.warn({ reason: err.message }, 'console OIDC sign-in refused');
      redirect(ex, '/console/?signin_error=oidc_failed', [clearFlow]);
    }
  });
}

async function bodyOf(sessions: ConsoleSessions, token: string): Promise<Static<typeof ConsoleSessionView> | null> {
  const resolved = await sessions.resolve(token);
  return resolved ? sessions.body(resolved) : null;
}
