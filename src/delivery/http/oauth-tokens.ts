import { createHash } from 'node:crypto';
import type { TargetAuth } from '../../routing/target-settings.js';
import type { HttpDispatcher } from './http-dispatcher.js';

export type OAuth2 = Extract<TargetAuth, { mode: 'oauth2' }>;

interface Cached {
  token: string;
  /** Epoch ms after which the token is not used any more (expiry minus the margin). */
  freshUntil: number;
}

/** Token lifetime assumed when the server does not say (RFC 6749 §5.1 leaves expires_in optional). */
const DEFAULT_LIFETIME_S = 300;

/**
 * OAuth 2.0 client-credentials tokens for target auth (docs/api.md#authentication, contract
 * §4). A token is fetched from the target's token URL, through the same
 * dispatcher as deliveries (SSRF guard, deadline, response cap), cached until
 * `marginSeconds` before it expires, and shared by every lane of the target:
 * concurrent misses make one request. `invalidate` drops a token a receiver
 * answered 401 to, so the next call fetches a new one.
 */
export class OAuthTokens {
  private readonly cache = new Map<string, Cached>();
  private readonly fetching = new Map<string, Promise<Cached>>();

  private readonly dispatcher: HttpDispatcher;
  private readonly marginSeconds: number;
  private readonly now: () => number;
  constructor(
    dispatcher: HttpDispatcher,
    marginSeconds: number,
    now: () => number = Date.now,
  ) {
    this.dispatcher = dispatcher;
    this.marginSeconds = marginSeconds;
    this.now = now;
  }

  async token(auth: OAuth2, timeoutMs: number): Promise<string> {
    const key = cacheKey(auth);
    const hit = this.cache.get(key);
    if (hit && hit.freshUntil > this.now()) return hit.token;
    let pending = this.fetching.get(key);
    if (!pending) {
      pending = this.fetchToken(auth, timeoutMs).finally(() => this.fetching.delete(key));
      this.fetching.set(key, pending);
    }
    const fresh = await pending;
    this.cache.set(key, fresh);
    return fresh.token;
  }

  /** Forgets `token` if it is still the cached one (a concurrent refresh may have replaced it). */
  invalidate(auth: OAuth2, token: string): void {
    const key = cacheKey(auth);
    if (this.cache.get(key)?.token === token) this.cache.delete(key);
  }

  private async fetchToken(auth: OAuth2, timeoutMs: number): Promise<Cached> {
    const form = new URLSearchParams({ grant_type: 'client_credentials' });
    if (auth.scope) form.set('scope', auth.scope);
    // client_secret_basic (RFC 6749 §2.3.1): id and secret form-encoded, then Basic.
    const basic = Buffer.from(`${encodeURIComponent(auth.clientId)}:${encodeURIComponent(auth.clientSecret)}`).toString('base64');
    const result = await this.dispatcher.send({
      url: new URL(auth.tokenUrl),
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json', authorization: `Basic ${basic}` },
      body: Buffer.from(form.toString()),
      timeoutMs,
    });
    if (result.kind === 'error') throw new TokenError(`token request failed: ${result.code}: ${result.error}`);
    if (result.status < 200 || result.status >= 300) throw new TokenError(`token endpoint answered ${result.status}`);
    let parsed: unknown;
    try {
      parsed = JSON.parse(result.body.toString('utf8'));
    } catch {
      throw new TokenError('token endpoint did not answer JSON');
    }
    const body = parsed as { access_token?: unknown; expires_in?: unknown; token_type?: unknown };
    if (typeof body.access_token !== 'string' || body.access_token === '' || /[^\x21-\x7e]/.test(body.access_token)) {
      throw new TokenError('token endpoint answered without a usable access_token');
    }
    if (typeof body.token_type === 'string' && body.token_type.toLowerCase() !== 'bearer') {
      throw new TokenError(`token endpoint gave a ${body.token_type} token; only bearer tokens are supported`);
    }
    const lifetime = typeof body.expires_in === 'number' && body.expires_in > 0 ? body.expires_in : Number(body.expires_in) > 0 ? Number(body.expires_in) : DEFAULT_LIFETIME_S;
    // A margin larger than a short lifetime would never cache: keep at least half of it.
    const margin = Math.min(this.marginSeconds, lifetime / 2);
    return { token: body.access_token, freshUntil: this.now() + (lifetime - margin) * 1000 };
  }
}

/** A token failure is an attempt failure: retried on the delivery's schedule. */
export class TokenError extends Error {}

/** Changing any credential of the target gives another cache entry. */
function cacheKey(auth: OAuth2): string {
  return createHash('sha256').update(JSON.stringify([auth.tokenUrl, auth.clientId, auth.clientSecret, auth.scope ?? ''])).digest('base64url');
}
