import { createPublicKey } from 'node:crypto';
import {
  createLocalJWKSet,
  createRemoteJWKSet,
  customFetch,
  errors,
  jwtVerify,
  type FetchImplementation,
  type JWK,
  type JWTPayload,
  type JWTVerifyGetKey,
  type LocalJWKSet,
  type RemoteJWKSet,
} from 'jose';

export type JwtAlgorithm = 'RS256' | 'ES256' | 'EdDSA' | 'HS256';
export const JWT_ALGORITHMS: readonly JwtAlgorithm[] = ['RS256', 'ES256', 'EdDSA', 'HS256'];

/** The identity provider a console session token must come from (config `auth.console`). */
export interface ConsoleJwtSettings {
  /** Expected `iss`; empty disables console sessions. */
  issuer: string;
  /** Expected `aud` (the token's aud may be a list that contains it). */
  audience: string;
  jwksUrl: string;
  publicKeyPem: string;
  sharedSecret: string;
  algorithms: readonly JwtAlgorithm[];
  clockToleranceMs: number;
  jwksCacheTtlMs: number;
}

/** How the JWKS URL is fetched; the defaults serve production, tests shorten them. */
export interface JwksFetchOptions {
  /** A fetch that takes longer is abandoned (jose `timeoutDuration`). Default 5 s. */
  timeoutMs?: number;
  /**
   * After a fetch, none other for this long: after a success even for a token
   * naming an unknown key id (jose `cooldownDuration`), after a failure at all.
   * Default 30 s.
   */
  cooldownMs?: number;
}

/** A verified console session. */
export interface ConsoleSession {
  subject: string;
  email: string | null;
}

/** Why a token was refused; the management API answers 401 with it. */
export class JwtRejected extends Error {
  override readonly name = 'JwtRejected';
}

const MAX_TOKEN_CHARS = 16_384;
const NOT_A_JWT = 'The token is not a JWT.';
const BAD_SIGNATURE = 'The token signature is not valid.';
const CLAIM_REASONS: Record<string, string> = {
  iss: 'The token was issued by another issuer.',
  aud: 'The token is meant for another audience.',
  exp: 'The token has no valid expiry.',
  nbf: 'The token is not valid yet.',
};

/**
 * Verifies console session tokens (docs/api.md#authentication) with jose: `jwtVerify` checks
 * the header (`crit` parameters it does not know are refused), the algorithm
 * against `auth.console.algorithms` (`none` is never accepted), the signature,
 * then issuer, audience, exp (required) and nbf with the clock tolerance.
 *
 * The key follows the token's algorithm: HS256 only ever uses the shared
 * secret; RS256, ES256 and EdDSA a key of the fitting type and curve from the
 * JWKS (chosen by kid), else the PEM key. An RSA/EC public key therefore never
 * serves as an HMAC secret, which closes the classic `alg` confusion attacks.
 */
export class ConsoleJwtVerifier {
  private readonly secret: Uint8Array | null;
  private readonly pem: LocalJWKSet | null;
  private readonly jwks: RemoteJWKSet | null;

  private readonly settings: ConsoleJwtSettings;
  constructor(
    settings: ConsoleJwtSettings,
    jwksFetch: JwksFetchOptions = {},
  ) {
    this.settings = settings;
    this.secret = settings.sharedSecret ? new TextEncoder().encode(settings.sharedSecret) : null;
    this.pem = settings.publicKeyPem ? pemKeySet(settings.publicKeyPem) : null;
    const cooldownMs = jwksFetch.cooldownMs ?? 30_000;
    this.jwks = settings.jwksUrl
      ? createRemoteJWKSet(new URL(settings.jwksUrl), {
          cacheMaxAge: settings.jwksCacheTtlMs,
          cooldownDuration: cooldownMs,
          timeoutDuration: jwksFetch.timeoutMs ?? 5_000,
          [customFetch]: failureAwareFetch(cooldownMs),
        })
      : null;
    if (settings.issuer && !this.pem && !this.secret && !this.jwks) {
      throw new Error('auth.console: an issuer is set but none of jwksUrl, publicKeyPem, sharedSecret is');
    }
  }

  get enabled(): boolean {
    return this.settings.issuer !== '';
  }

  async verify(token: string, now = Date.now()): Promise<ConsoleSession> {
    if (!this.enabled) throw new JwtRejected('Console sessions are not configured.');
    if (token.length > MAX_TOKEN_CHARS) throw new JwtRejected('The token is too long.');
    let claims: JWTPayload;
    try {
      ({ payload: claims } = await jwtVerify(token, this.keyFor, {
        algorithms: [...this.settings.algorithms],
        issuer: this.settings.issuer,
        audience: this.settings.audience,
        requiredClaims: ['exp'],
        clockTolerance: this.settings.clockToleranceMs / 1000,
        currentDate: new Date(now),
      }));
    } catch (err) {
      throw rejection(err);
    }
    const sub = claims.sub;
    if (typeof sub !== 'string' || sub === '' || sub.length > 255 || /[\u0000-\u001f]/.test(sub)) {
      throw new JwtRejected('The token names no usable subject.');
    }
    return { subject: sub, email: typeof claims.email === 'string' ? claims.email : null };
  }

  /** The key for a token's (already allowed) algorithm; a JwtRejected when there is none. */
  private readonly keyFor: JWTVerifyGetKey = async (header, token) => {
    if (header.alg === 'HS256') {
      if (this.secret) return this.secret;
      throw new JwtRejected(BAD_SIGNATURE);
    }
    if (this.jwks) {
      try {
        return await this.jwks(header, token);
      } catch (err) {
        if (!(err instanceof errors.JWKSNoMatchingKey || err instanceof errors.JWKSMultipleMatchingKeys)) {
          throw new JwtRejected('The identity provider keys could not be fetched or used.');
        }
      }
    }
    if (this.pem) {
      try {
        // The PEM key has no kid: whatever kid the token names, it is the key.
        return await this.pem({ alg: header.alg });
      } catch {
        // not a key of this algorithm's type
      }
    }
    throw new JwtRejected(BAD_SIGNATURE);
  };
}

/** The PEM key (public key or certificate) as a one-key set, so jose picks it only for algorithms it fits. */
function pemKeySet(pem: string): LocalJWKSet {
  return createLocalJWKSet({ keys: [createPublicKey(pem).export({ format: 'jwk' }) as JWK] });
}

/**
 * jose's JWKS fetch plus what it leaves to its caller: a provider that failed
 * (no answer in time, not 200 — redirects are not followed — or no JWKS) is not
 * asked again within the cooldown, where jose alone would ask for every token;
 * and meanwhile the last document it served stays in use.
 */
function failureAwareFetch(cooldownMs: number): FetchImplementation {
  let lastGood: string | null = null;
  let failedAt = Number.NEGATIVE_INFINITY;
  const lastGoodOr = (err: unknown): Response => {
    if (lastGood === null) throw err;
    return jsonResponse(lastGood);
  };
  return async (url, init) => {
    if (Date.now() - failedAt < cooldownMs) return lastGoodOr(new Error('The JWKS fetch failed moments ago.'));
    try {
      const res = await fetch(url, init);
      if (res.status !== 200) throw new Error(`The JWKS URL answered ${res.status}.`);
      const body = await res.text();
      createLocalJWKSet(JSON.parse(body)); // jose's own check of the document
      lastGood = body;
      return jsonResponse(body);
    } catch (err) {
      failedAt = Date.now();
      return lastGoodOr(err);
    }
  };
}

function jsonResponse(body: string): Response {
  return new Response(body, { status: 200, headers: { 'content-type': 'application/json' } });
}

/** The reason a client is told, from what jose (or the key lookup) threw. */
function rejection(err: unknown): JwtRejected {
  if (err instanceof JwtRejected) return err;
  if (err instanceof errors.JOSEAlgNotAllowed) return new JwtRejected('The token is signed with an algorithm that is not allowed.');
  // Thrown here only by the `crit` check (the algorithm is allowed, keys are resolved above).
  if (err instanceof errors.JOSENotSupported) return new JwtRejected('The token marks as critical (crit) a header parameter this server does not understand.');
  if (err instanceof errors.JWSSignatureVerificationFailed) return new JwtRejected(BAD_SIGNATURE);
  if (err instanceof errors.JWTExpired) return new JwtRejected('The token has expired.');
  if (err instanceof errors.JWTClaimValidationFailed) {
    const reason = err.claim === 'nbf' && err.reason === 'invalid' ? 'The token has an invalid nbf.' : CLAIM_REASONS[err.claim];
    return new JwtRejected(reason ?? `The token has an invalid ${err.claim} claim.`);
  }
  return new JwtRejected(NOT_A_JWT);
}
