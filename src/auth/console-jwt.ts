import { createHmac, createPublicKey, timingSafeEqual, verify, type KeyObject } from 'node:crypto';
import { JwksCache, type FetchJson } from './jwks-cache.js';

export type JwtAlgorithm = 'RS256' | 'ES256' | 'HS256';
export const JWT_ALGORITHMS: readonly JwtAlgorithm[] = ['RS256', 'ES256', 'HS256'];

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
const SEGMENT = /^[A-Za-z0-9_-]+$/;

/**
 * Verifies console session tokens (contract §2) with node:crypto alone:
 * RS256, ES256 and HS256, signature first, then issuer, audience, exp and nbf.
 *
 *   base64url(header) . base64url(payload) . base64url(signature)
 *   └──────── signed bytes (ASCII) ───────┘
 *
 * The algorithm a token claims must be allowed by config AND fit the key it is
 * checked with (an RSA/EC public key never serves as an HMAC secret), which
 * closes the classic `alg` confusion attacks; `none` is never accepted.
 */
export class ConsoleJwtVerifier {
  private readonly pem: KeyObject | null;
  private readonly secret: Buffer | null;
  private readonly jwks: JwksCache | null;

  constructor(
    private readonly settings: ConsoleJwtSettings,
    fetchJson?: FetchJson,
  ) {
    this.pem = settings.publicKeyPem ? createPublicKey(settings.publicKeyPem) : null;
    this.secret = settings.sharedSecret ? Buffer.from(settings.sharedSecret, 'utf8') : null;
    this.jwks = settings.jwksUrl ? new JwksCache(settings.jwksUrl, settings.jwksCacheTtlMs, 30_000, fetchJson) : null;
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
    const parts = token.split('.');
    if (parts.length !== 3 || !parts.every((p) => SEGMENT.test(p))) throw new JwtRejected('The token is not a JWT.');
    const [h, p, s] = parts as [string, string, string];
    const header = decodeJson(h);
    const alg = header.alg;
    if (typeof alg !== 'string' || !this.settings.algorithms.includes(alg as JwtAlgorithm)) {
      throw new JwtRejected('The token is signed with an algorithm that is not allowed.');
    }
    const kid = typeof header.kid === 'string' ? header.kid : null;
    const signed = Buffer.from(`${h}.${p}`, 'ascii');
    const signature = Buffer.from(s, 'base64url');
    if (!(await this.signatureValid(alg as JwtAlgorithm, kid, signed, signature))) throw new JwtRejected('The token signature is not valid.');
    return this.checkClaims(decodeJson(p), now);
  }

  private async signatureValid(alg: JwtAlgorithm, kid: string | null, signed: Buffer, signature: Buffer): Promise<boolean> {
    if (alg === 'HS256') {
      if (!this.secret) return false;
      const expected = createHmac('sha256', this.secret).update(signed).digest();
      return expected.length === signature.length && timingSafeEqual(expected, signature);
    }
    const key = await this.publicKeyFor(alg, kid);
    if (!key) return false;
    if (alg === 'RS256') return verify('sha256', signed, key, signature);
    // JWS carries ECDSA signatures as r||s (IEEE P1363), not DER.
    return signature.length === 64 && verify('sha256', signed, { key, dsaEncoding: 'ieee-p1363' }, signature);
  }

  private async publicKeyFor(alg: 'RS256' | 'ES256', kid: string | null): Promise<KeyObject | null> {
    const fits = (key: KeyObject) =>
      alg === 'RS256' ? key.asymmetricKeyType === 'rsa' : key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1';
    if (this.jwks) {
      let entry;
      try {
        entry = await this.jwks.find(kid);
      } catch {
        throw new JwtRejected('The identity provider keys could not be fetched.');
      }
      if (entry && (entry.alg === null || entry.alg === alg) && fits(entry.key)) return entry.key;
    }
    if (this.pem && fits(this.pem)) return this.pem;
    return null;
  }

  private checkClaims(claims: Record<string, unknown>, now: number): ConsoleSession {
    const tolerance = this.settings.clockToleranceMs;
    if (claims.iss !== this.settings.issuer) throw new JwtRejected('The token was issued by another issuer.');
    const aud = claims.aud;
    const audiences = Array.isArray(aud) ? aud : [aud];
    if (!audiences.includes(this.settings.audience)) throw new JwtRejected('The token is meant for another audience.');
    if (typeof claims.exp !== 'number' || !Number.isFinite(claims.exp)) throw new JwtRejected('The token has no expiry.');
    if (now - tolerance >= claims.exp * 1000) throw new JwtRejected('The token has expired.');
    if (claims.nbf !== undefined) {
      if (typeof claims.nbf !== 'number' || !Number.isFinite(claims.nbf)) throw new JwtRejected('The token has an invalid nbf.');
      if (now + tolerance < claims.nbf * 1000) throw new JwtRejected('The token is not valid yet.');
    }
    if (typeof claims.sub !== 'string' || claims.sub === '' || claims.sub.length > 255 || /[\u0000-\u001f]/.test(claims.sub)) {
      throw new JwtRejected('The token names no usable subject.');
    }
    return { subject: claims.sub, email: typeof claims.email === 'string' ? claims.email : null };
  }
}

function decodeJson(segment: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'));
  } catch {
    throw new JwtRejected('The token is not a JWT.');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new JwtRejected('The token is not a JWT.');
  return value as Record<string, unknown>;
}
