import { createHmac, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';

/** Test-side token minting: what an identity provider would issue. */
export type Claims = Record<string, unknown>;

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

export function signHs256(claims: Claims, secret: string, header: Claims = {}): string {
  const head = `${b64({ alg: 'HS256', typ: 'JWT', ...header })}.${b64(claims)}`;
  return `${head}.${createHmac('sha256', secret).update(head).digest('base64url')}`;
}

export function signRs256(claims: Claims, key: KeyObject, header: Claims = {}): string {
  const head = `${b64({ alg: 'RS256', typ: 'JWT', ...header })}.${b64(claims)}`;
  return `${head}.${sign('sha256', Buffer.from(head), key).toString('base64url')}`;
}

export function signEs256(claims: Claims, key: KeyObject, header: Claims = {}, encoding: 'ieee-p1363' | 'der' = 'ieee-p1363'): string {
  const head = `${b64({ alg: 'ES256', typ: 'JWT', ...header })}.${b64(claims)}`;
  return `${head}.${sign('sha256', Buffer.from(head), { key, dsaEncoding: encoding }).toString('base64url')}`;
}

export function signEdDsa(claims: Claims, key: KeyObject, header: Claims = {}): string {
  const head = `${b64({ alg: 'EdDSA', typ: 'JWT', ...header })}.${b64(claims)}`;
  return `${head}.${sign(null, Buffer.from(head), key).toString('base64url')}`;
}

export function rsaKeys() {
  return generateKeyPairSync('rsa', { modulusLength: 2048 });
}

export function ecKeys() {
  return generateKeyPairSync('ec', { namedCurve: 'P-256' });
}

export function edKeys() {
  return generateKeyPairSync('ed25519');
}

/** Standard claims valid for the next hour. */
export function claimsFor(sub: string, issuer: string, audience: string | string[], extra: Claims = {}): Claims {
  const now = Math.floor(Date.now() / 1000);
  return { iss: issuer, aud: audience, sub, iat: now, exp: now + 3600, ...extra };
}
