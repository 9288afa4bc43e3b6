import { createHash, timingSafeEqual } from 'node:crypto';
import * as oidc from 'openid-client';
import { JwtRejected, type ConsoleJwtVerifier } from './console-jwt.js';

/** The secrets of one sign-in attempt, kept in a short-lived HttpOnly cookie until the callback. */
export interface OidcFlow {
  state: string;
  nonce: string;
  codeVerifier: string;
}

/** Why a sign-in through the identity provider failed (logged; the browser only learns that it did). */
export class OidcFailed extends Error {
  override readonly name = 'OidcFailed';
}

export interface OidcSettings {
  issuer: string;
  /** The client id: auth.console.audience, which an ID token's `aud` must name. */
  clientId: string;
  clientSecret: string;
}

/** Seconds each request to the provider may take (discovery, token). */
const REQUEST_TIMEOUT_S = 5;
const FLOW_PART = /^[A-Za-z0-9_-]{43}$/;

/**
 * The console's OpenID Connect client: authorization code flow with PKCE
 * (S256), `state` against login CSRF, `nonce` against ID-token replay.
 * The protocol (discovery and its issuer check, the authorization URL, the
 * callback's checks, the code exchange, the ID token's claims and nonce) is
 * openid-client's, the certified library of the field. The ID token is then
 * verified once more by the same ConsoleJwtVerifier as bearer sessions: the
 * keys and algorithms the operator configured, not only what the provider's
 * discovery names.
 */
export class OidcClient {
  private configuration: Promise<oidc.Configuration> | null = null;

  private readonly settings: OidcSettings;
  private readonly verifier: ConsoleJwtVerifier;
  constructor(
    settings: OidcSettings,
    verifier: ConsoleJwtVerifier,
  ) {
    this.settings = settings;
    this.verifier = verifier;
  }

  /** Starts a sign-in: where to send the browser, and the flow to remember. */
  async start(redirectUri: string): Promise<{ url: string; flow: OidcFlow }> {
    const config = await this.discover();
    const flow: OidcFlow = { state: oidc.randomState(), nonce: oidc.randomNonce(), codeVerifier: oidc.randomPKCECodeVerifier() };
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      scope: 'openid email',
      state: flow.state,
      nonce: flow.nonce,
      code_challenge: await oidc.calculatePKCECodeChallenge(flow.codeVerifier),
      code_challenge_method: 'S256',
    });
    return { url: url.toString(), flow };
  }

  /** Finishes a sign-in: checks state, redeems the code, verifies the ID token; the user it names. */
  async finish(query: URLSearchParams, flow: OidcFlow, redirectUri: string): Promise<{ subject: string; email: string | null }> {
    const error = query.get('error');
    if (error !== null) throw new OidcFailed(`the identity provider answered error=${error.slice(0, 100)}`);
    // Checked here too (constant time) so a forged callback never reaches the token endpoint.
    if (!sameSecret(query.get('state') ?? '', flow.state)) throw new OidcFailed('the state does not match the one this browser started with');
    const config = await this.discover();
    // openid-client takes the callback URL as the browser reached it; the
    // redirect_uri it sends is that URL without its query, i.e. `redirectUri`.
    const callback = new URL(redirectUri);
    callback.search = query.toString();
    let idToken: string | undefined;
    try {
      const tokens = await oidc.authorizationCodeGrant(
        config,
        callback,
        { pkceCodeVerifier: flow.codeVerifier, expectedState: flow.state, expectedNonce: flow.nonce, idTokenExpected: true },
      );
      idToken = tokens.id_token;
    } catch (err) {
      throw new OidcFailed(`the code exchange failed: ${describe(err)}`);
    }
    if (!idToken) throw new OidcFailed('the token endpoint answered without an ID token');
    try {
      return await this.verifier.verify(idToken);
    } catch (err) {
      if (err instanceof JwtRejected) throw new OidcFailed(`the ID token was refused: ${err.message}`);
      throw err;
    }
  }

  /** The provider's configuration from its discovery document, read once (again after a failure). */
  private discover(): Promise<oidc.Configuration> {
    const { issuer, clientId, clientSecret } = this.settings;
    // Plain http only for a provider on this machine (a development or test provider).
    const local = /^http:\/\/(127\.0\.0\.1|localhost|\[::1\])(:\d+)?(\/|$)/.test(issuer);
    this.configuration ??= oidc
      .discovery(new URL(issuer), clientId, clientSecret || undefined, clientSecret ? oidc.ClientSecretBasic(clientSecret) : oidc.None(), {
        timeout: REQUEST_TIMEOUT_S,
        execute: local ? [oidc.allowInsecureRequests] : [],
      })
      .catch((err: unknown) => {
        this.configuration = null;
        throw new OidcFailed(`the discovery document of ${issuer} could not be used: ${describe(err)}`);
      });
    return this.configuration;
  }
}

/** An error from the provider exchange, for the log: its message and, where one is given, its code. */
function describe(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const code = (err as { code?: unknown }).code;
  const provider = (err as { error?: unknown }).error;
  return [err.message, typeof code === 'string' ? `(${code})` : '', typeof provider === 'string' ? `error=${provider.slice(0, 100)}` : ''].filter(Boolean).join(' ');
}

/** The flow as one cookie value, and back (null when it is not one we wrote). */
export function encodeFlow(flow: OidcFlow): string {
  return `${flow.state}.${flow.nonce}.${flow.codeVerifier}`;
}

export function decodeFlow(value: string | null): OidcFlow | null {
  const parts = value?.split('.') ?? [];
  if (parts.length !== 3 || !parts.every((p) => FLOW_PART.test(p))) return null;
  return { state: parts[0]!, nonce: parts[1]!, codeVerifier: parts[2]! };
}

/** Constant-time equality of two strings (hashed first, so their lengths do not matter). */
function sameSecret(a: string, b: string): boolean {
  const h = (s: string) => createHash('sha256').update(s).digest();
  return timingSafeEqual(h(a), h(b));
}
