import t, { type Test } from 'tap';
import { ConsoleJwtVerifier, type ConsoleJwtSettings } from '../../../src/auth/console-jwt.js';
import { claimsFor, ecKeys, rsaKeys, signEs256, signHs256, signRs256 } from '../../helpers/jwt.js';

const ISS = 'https://id.example.test/';
const AUD = 'streamgate-console';
const SECRET = 'a-shared-secret-of-reasonable-length';

const settings = (over: Partial<ConsoleJwtSettings> = {}): ConsoleJwtSettings => ({
  issuer: ISS,
  audience: AUD,
  jwksUrl: '',
  publicKeyPem: '',
  sharedSecret: '',
  algorithms: ['RS256', 'ES256', 'HS256'],
  clockToleranceMs: 30_000,
  jwksCacheTtlMs: 600_000,
  ...over,
});

const rsa = rsaKeys();
const ec = ecKeys();
const rsaPem = rsa.publicKey.export({ type: 'spki', format: 'pem' }).toString();

async function rejected(t: Test, verifier: ConsoleJwtVerifier, token: string, reason: RegExp, what: string) {
  await t.rejects(verifier.verify(token), { name: 'JwtRejected' }, what);
  await verifier.verify(token).catch((err: Error) => t.match(err.message, reason, `${what}: reason`));
}

t.test('HS256 with the shared secret', async (t) => {
  const v = new ConsoleJwtVerifier(settings({ sharedSecret: SECRET }));
  const session = await v.verify(signHs256(claimsFor('user-1', ISS, AUD, { email: 'u@example.test' }), SECRET));
  t.same(session, { subject: 'user-1', email: 'u@example.test' });
  await rejected(t, v, signHs256(claimsFor('user-1', ISS, AUD), 'another-secret'), /signature/, 'wrong secret');
});

t.test('RS256 with a PEM public key', async (t) => {
  const v = new ConsoleJwtVerifier(settings({ publicKeyPem: rsaPem }));
  t.equal((await v.verify(signRs256(claimsFor('user-2', ISS, AUD), rsa.privateKey))).subject, 'user-2');
  const other = rsaKeys();
  await rejected(t, v, signRs256(claimsFor('user-2', ISS, AUD), other.privateKey), /signature/, 'signed by another key');
});

t.test('ES256 from a JWKS document, key chosen by kid', async (t) => {
  const jwk = { ...ec.publicKey.export({ format: 'jwk' }), kid: 'k1', use: 'sig', alg: 'ES256' };
  const v = new ConsoleJwtVerifier(settings({ jwksUrl: 'https://id.example.test/jwks' }), async () => ({ keys: [jwk] }));
  t.equal((await v.verify(signEs256(claimsFor('user-3', ISS, AUD), ec.privateKey, { kid: 'k1' }))).subject, 'user-3');
  await rejected(t, v, signEs256(claimsFor('user-3', ISS, AUD), ec.privateKey, { kid: 'k1' }, 'der'), /signature/, 'a DER signature is not JWS');
  await rejected(t, v, signEs256(claimsFor('user-3', ISS, AUD), ec.privateKey, { kid: 'nope' }), /signature/, 'unknown kid');
});

t.test('issuer, audience, expiry and not-before are checked', async (t) => {
  const v = new ConsoleJwtVerifier(settings({ sharedSecret: SECRET }));
  const now = Math.floor(Date.now() / 1000);
  await rejected(t, v, signHs256(claimsFor('u', 'https://evil.test/', AUD), SECRET), /issuer/, 'wrong issuer');
  await rejected(t, v, signHs256(claimsFor('u', ISS, 'someone-else'), SECRET), /audience/, 'wrong audience');
  t.equal((await v.verify(signHs256(claimsFor('u', ISS, ['x', AUD]), SECRET))).subject, 'u', 'aud may be a list holding ours');
  await rejected(t, v, signHs256(claimsFor('u', ISS, AUD, { exp: now - 60 }), SECRET), /expired/, 'expired beyond the tolerance');
  t.equal((await v.verify(signHs256(claimsFor('u', ISS, AUD, { exp: now - 10 }), SECRET))).subject, 'u', 'expired within the tolerance');
  await rejected(t, v, signHs256(claimsFor('u', ISS, AUD, { exp: undefined }), SECRET), /expiry/, 'no exp');
  await rejected(t, v, signHs256(claimsFor('u', ISS, AUD, { nbf: now + 120 }), SECRET), /not valid yet/, 'nbf in the future');
  t.equal((await v.verify(signHs256(claimsFor('u', ISS, AUD, { nbf: now + 10 }), SECRET))).subject, 'u', 'nbf within the tolerance');
  await rejected(t, v, signHs256(claimsFor('', ISS, AUD), SECRET), /subject/, 'empty sub');
  await rejected(t, v, signHs256(claimsFor('u', ISS, AUD, { sub: 42 }), SECRET), /subject/, 'non-string sub');
});

t.test('algorithm confusion and alg none are refused', async (t) => {
  const v = new ConsoleJwtVerifier(settings({ publicKeyPem: rsaPem }));
  // The classic attack: HMAC with the public key's PEM text as the secret.
  await rejected(t, v, signHs256(claimsFor('u', ISS, AUD), rsaPem), /signature/, 'HS256 keyed with the public PEM');
  const none = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from(JSON.stringify(claimsFor('u', ISS, AUD))).toString('base64url')}.x`;
  await rejected(t, v, none, /algorithm/, 'alg none');
  await rejected(t, v, signEs256(claimsFor('u', ISS, AUD), ec.privateKey), /signature/, 'ES256 checked against an RSA key');
  const rsOnly = new ConsoleJwtVerifier(settings({ sharedSecret: SECRET, algorithms: ['RS256'] }));
  await rejected(t, rsOnly, signHs256(claimsFor('u', ISS, AUD), SECRET), /algorithm/, 'an algorithm config does not allow');
});

t.test('malformed tokens are refused with a reason, never another error', async (t) => {
  const v = new ConsoleJwtVerifier(settings({ sharedSecret: SECRET }));
  for (const token of ['', 'abc', 'a.b', 'a.b.c.d', '..', 'e30.e30.', '!!!.e30.sig', 'e30.bm90IGpzb24.sig', `${'a'.repeat(20_000)}.b.c`]) {
    await t.rejects(v.verify(token), { name: 'JwtRejected' }, JSON.stringify(token.slice(0, 30)));
  }
});

t.test('without an issuer console sessions are off; an issuer without keys fails at boot', async (t) => {
  const off = new ConsoleJwtVerifier(settings({ issuer: '' }));
  t.equal(off.enabled, false);
  await t.rejects(off.verify(signHs256(claimsFor('u', '', AUD), SECRET)), { name: 'JwtRejected' });
  t.throws(() => new ConsoleJwtVerifier(settings()), /none of jwksUrl, publicKeyPem, sharedSecret/);
});
