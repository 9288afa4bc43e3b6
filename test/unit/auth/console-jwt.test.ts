import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHmac, type KeyObject } from 'node:crypto';
import t, { type Test } from 'tap';
import { ConsoleJwtVerifier, type ConsoleJwtSettings } from '../../../src/auth/console-jwt.js';
import { claimsFor, ecKeys, edKeys, rsaKeys, signEdDsa, signEs256, signHs256, signRs256 } from '../../helpers/jwt.js';

const ISS = 'https://id.example.test/';
const AUD = 'streamgate-console';
const SECRET = 'a-shared-secret-of-reasonable-length';

const settings = (over: Partial<ConsoleJwtSettings> = {}): ConsoleJwtSettings => ({
  issuer: ISS,
  audience: AUD,
  jwksUrl: '',
  publicKeyPem: '',
  sharedSecret: '',
  algorithms: ['RS256', 'ES256', 'EdDSA', 'HS256'],
  clockToleranceMs: 30_000,
  jwksCacheTtlMs: 600_000,
  ...over,
});

const rsa = rsaKeys();
const ec = ecKeys();
const ed = edKeys();
const pem = (key: KeyObject) => key.export({ type: 'spki', format: 'pem' }).toString();
const jwk = (key: KeyObject, kid: string, extra: object = {}) => ({ ...key.export({ format: 'jwk' }), kid, ...extra });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Verifies once; the token must be refused with a JwtRejected whose message matches. */
async function rejected(t: Test, verifier: ConsoleJwtVerifier, token: string, reason: RegExp, what: string) {
  const err = await verifier.verify(token).then(
    () => null,
    (e: unknown) => e,
  );
  t.match(err, { name: 'JwtRejected', message: reason }, what);
}

type Answer = { keys: unknown } | number | 'hang' | 'redirect' | 'not json';

/** An identity provider's JWKS URL on 127.0.0.1, whose answer the test changes. */
async function idp(t: Test, initial: Answer) {
  let answer = initial;
  const hits = { jwks: 0, moved: 0 };
  const server = http.createServer((req, res) => {
    if (req.url === '/moved') {
      hits.moved++;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ keys: [jwk(rsa.publicKey, 'r1')] }));
      return;
    }
    hits.jwks++;
    if (answer === 'hang') return;
    if (answer === 'redirect') return void res.writeHead(302, { location: '/moved' }).end();
    if (answer === 'not json') return void res.end('<html>');
    if (typeof answer === 'number') return void res.writeHead(answer).end();
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify(answer));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => {
    server.closeAllConnections();
    return new Promise<void>((r) => server.close(() => r()));
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks`,
    hits,
    serve(next: Answer) {
      answer = next;
    },
  };
}

t.test('HS256 with the shared secret', async (t) => {
  const v = new ConsoleJwtVerifier(settings({ sharedSecret: SECRET }));
  const session = await v.verify(signHs256(claimsFor('user-1', ISS, AUD, { email: 'u@example.test' }), SECRET));
  t.same(session, { subject: 'user-1', email: 'u@example.test' });
  await rejected(t, v, signHs256(claimsFor('user-1', ISS, AUD), 'another-secret'), /signature/, 'wrong secret');
});

t.test('RS256 with a PEM public key', async (t) => {
  const v = new ConsoleJwtVerifier(settings({ publicKeyPem: pem(rsa.publicKey) }));
  t.equal((await v.verify(signRs256(claimsFor('user-2', ISS, AUD), rsa.privateKey))).subject, 'user-2');
  t.equal((await v.verify(signRs256(claimsFor('user-2', ISS, AUD), rsa.privateKey, { kid: 'any' }))).subject, 'user-2', 'whatever kid the token names');
  const other = rsaKeys();
  await rejected(t, v, signRs256(claimsFor('user-2', ISS, AUD), other.privateKey), /signature/, 'signed by another key');
});

t.test('ES256 from a JWKS document, key chosen by kid', async (t) => {
  const provider = await idp(t, { keys: [jwk(ec.publicKey, 'k1', { use: 'sig', alg: 'ES256' }), jwk(rsa.publicKey, 'r1')] });
  const v = new ConsoleJwtVerifier(settings({ jwksUrl: provider.url }));
  t.equal((await v.verify(signEs256(claimsFor('user-3', ISS, AUD), ec.privateKey, { kid: 'k1' }))).subject, 'user-3');
  await rejected(t, v, signEs256(claimsFor('user-3', ISS, AUD), ec.privateKey, { kid: 'k1' }, 'der'), /signature/, 'a DER signature is not JWS');
  await rejected(t, v, signEs256(claimsFor('user-3', ISS, AUD), ec.privateKey, { kid: 'nope' }), /signature/, 'unknown kid');
  await rejected(t, v, signEs256(claimsFor('user-3', ISS, AUD), ec.privateKey, { kid: 'r1' }), /signature/, 'a kid naming a key of another type');
});

t.test('EdDSA (Ed25519) with a PEM public key and from a JWKS document', async (t) => {
  const v = new ConsoleJwtVerifier(settings({ publicKeyPem: pem(ed.publicKey) }));
  t.equal((await v.verify(signEdDsa(claimsFor('user-4', ISS, AUD), ed.privateKey))).subject, 'user-4');
  await rejected(t, v, signEdDsa(claimsFor('user-4', ISS, AUD), edKeys().privateKey), /signature/, 'signed by another key');
  await rejected(t, v, signRs256(claimsFor('user-4', ISS, AUD), rsa.privateKey), /signature/, 'RS256 checked against an Ed25519 key');

  const provider = await idp(t, { keys: [jwk(ed.publicKey, 'e1', { use: 'sig' })] });
  const fromJwks = new ConsoleJwtVerifier(settings({ jwksUrl: provider.url }));
  t.equal((await fromJwks.verify(signEdDsa(claimsFor('user-5', ISS, AUD), ed.privateKey, { kid: 'e1' }))).subject, 'user-5');

  const notListed = new ConsoleJwtVerifier(settings({ publicKeyPem: pem(ed.publicKey), algorithms: ['RS256', 'ES256', 'HS256'] }));
  await rejected(t, notListed, signEdDsa(claimsFor('user-4', ISS, AUD), ed.privateKey), /algorithm/, 'EdDSA when config does not list it');
});

t.test('JWKS keys that are not for verification are not used; a token without kid needs a single fitting key', async (t) => {
  const other = rsaKeys();
  const provider = await idp(t, { keys: [jwk(rsa.publicKey, 'enc', { use: 'enc' }), jwk(rsa.publicKey, 'ops', { key_ops: ['encrypt'] })] });
  const v = new ConsoleJwtVerifier(settings({ jwksUrl: provider.url }));
  await rejected(t, v, signRs256(claimsFor('u', ISS, AUD), rsa.privateKey, { kid: 'enc' }), /signature/, 'use: enc');
  await rejected(t, v, signRs256(claimsFor('u', ISS, AUD), rsa.privateKey, { kid: 'ops' }), /signature/, 'key_ops without verify');

  const one = await idp(t, { keys: [jwk(rsa.publicKey, 'r1'), jwk(ec.publicKey, 'k1')] });
  const single = new ConsoleJwtVerifier(settings({ jwksUrl: one.url }));
  t.equal((await single.verify(signRs256(claimsFor('u', ISS, AUD), rsa.privateKey))).subject, 'u', 'the only RSA key');
  t.equal((await single.verify(signEs256(claimsFor('u', ISS, AUD), ec.privateKey))).subject, 'u', 'the only P-256 key');
  const two = await idp(t, { keys: [jwk(rsa.publicKey, 'r1'), jwk(other.publicKey, 'r2')] });
  const several = new ConsoleJwtVerifier(settings({ jwksUrl: two.url }));
  await rejected(t, several, signRs256(claimsFor('u', ISS, AUD), rsa.privateKey), /signature/, 'never one of several');
});

t.test('issuer, audience, expiry and not-before are checked', async (t) => {
  const v = new ConsoleJwtVerifier(settings({ sharedSecret: SECRET }));
  const now = Math.floor(Date.now() / 1000);
  await rejected(t, v, signHs256(claimsFor('u', 'https://evil.test/', AUD), SECRET), /issuer/, 'wrong issuer');
  await rejected(t, v, signHs256(claimsFor('u', ISS, AUD, { iss: undefined }), SECRET), /issuer/, 'no issuer');
  await rejected(t, v, signHs256(claimsFor('u', ISS, 'someone-else'), SECRET), /audience/, 'wrong audience');
  await rejected(t, v, signHs256(claimsFor('u', ISS, ['x', 'y']), SECRET), /audience/, 'an aud list without ours');
  await rejected(t, v, signHs256(claimsFor('u', ISS, AUD, { aud: undefined }), SECRET), /audience/, 'no audience');
  t.equal((await v.verify(signHs256(claimsFor('u', ISS, ['x', AUD]), SECRET))).subject, 'u', 'aud may be a list holding ours');
  await rejected(t, v, signHs256(claimsFor('u', ISS, AUD, { exp: now - 60 }), SECRET), /expired/, 'expired beyond the tolerance');
  t.equal((await v.verify(signHs256(claimsFor('u', ISS, AUD, { exp: now - 10 }), SECRET))).subject, 'u', 'expired within the tolerance');
  await rejected(t, v, signHs256(claimsFor('u', ISS, AUD, { exp: undefined }), SECRET), /expiry/, 'no exp');
  await rejected(t, v, signHs256(claimsFor('u', ISS, AUD, { exp: String(now + 60) }), SECRET), /expiry/, 'a string exp');
  await rejected(t, v, signHs256(claimsFor('u', ISS, AUD, { nbf: now + 120 }), SECRET), /not valid yet/, 'nbf in the future');
  t.equal((await v.verify(signHs256(claimsFor('u', ISS, AUD, { nbf: now + 10 }), SECRET))).subject, 'u', 'nbf within the tolerance');
  await rejected(t, v, signHs256(claimsFor('u', ISS, AUD, { nbf: 'soon' }), SECRET), /invalid nbf/, 'a string nbf');
  await rejected(t, v, signHs256(claimsFor('', ISS, AUD), SECRET), /subject/, 'empty sub');
  await rejected(t, v, signHs256(claimsFor('u', ISS, AUD, { sub: 42 }), SECRET), /subject/, 'non-string sub');

  const strict = new ConsoleJwtVerifier(settings({ sharedSecret: SECRET, clockToleranceMs: 0 }));
  await rejected(t, strict, signHs256(claimsFor('u', ISS, AUD, { exp: now - 10 }), SECRET), /expired/, 'no tolerance: expired is expired');
  await rejected(t, strict, signHs256(claimsFor('u', ISS, AUD, { nbf: now + 10 }), SECRET), /not valid yet/, 'no tolerance: nbf ahead');
  const token = signHs256(claimsFor('u', ISS, AUD, { exp: now + 60 }), SECRET);
  await t.rejects(strict.verify(token, (now + 61) * 1000), { name: 'JwtRejected', message: /expired/ }, 'checked at the time given');
});

t.test('algorithm confusion and alg none are refused', async (t) => {
  const rsaPem = pem(rsa.publicKey);
  const v = new ConsoleJwtVerifier(settings({ publicKeyPem: rsaPem }));
  // The classic attack: HMAC with the public key's PEM text as the secret.
  await rejected(t, v, signHs256(claimsFor('u', ISS, AUD), rsaPem), /signature/, 'HS256 keyed with the public PEM');
  const none = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from(JSON.stringify(claimsFor('u', ISS, AUD))).toString('base64url')}.x`;
  await rejected(t, v, none, /algorithm/, 'alg none');
  await rejected(t, v, none.slice(0, -1), /algorithm/, 'alg none, empty signature');
  await rejected(t, v, signEs256(claimsFor('u', ISS, AUD), ec.privateKey), /signature/, 'ES256 checked against an RSA key');
  const rsOnly = new ConsoleJwtVerifier(settings({ sharedSecret: SECRET, algorithms: ['RS256'] }));
  await rejected(t, rsOnly, signHs256(claimsFor('u', ISS, AUD), SECRET), /algorithm/, 'an algorithm config does not allow');
});

t.test('a crit header parameter the verifier does not understand is refused', async (t) => {
  const v = new ConsoleJwtVerifier(settings({ sharedSecret: SECRET }));
  const claims = claimsFor('u', ISS, AUD);
  await rejected(t, v, signHs256(claims, SECRET, { crit: ['x-bind'], 'x-bind': 'tls' }), /crit/, 'an unknown extension');
  await rejected(t, v, signHs256(claims, SECRET, { crit: ['x-absent'] }), /crit/, 'an unknown extension that is not even there');
  await rejected(t, v, signHs256(claims, SECRET, { crit: [] }), /JWT/, 'an empty crit list');
  await rejected(t, v, signHs256(claims, SECRET, { crit: ['b64'], b64: false }), /not a JWT/, 'an unencoded payload (b64: false)');
  t.equal((await v.verify(signHs256(claims, SECRET, { 'x-bind': 'tls' }))).subject, 'u', 'the same parameter, not marked critical, is ignored');
});

t.test('malformed tokens are refused with a reason, never another error', async (t) => {
  const v = new ConsoleJwtVerifier(settings({ sharedSecret: SECRET }));
  for (const token of ['', 'abc', 'a.b', 'a.b.c.d', '..', 'e30.e30.', '!!!.e30.sig', 'e30.bm90IGpzb24.sig', `${'a'.repeat(20_000)}.b.c`]) {
    await t.rejects(v.verify(token), { name: 'JwtRejected' }, JSON.stringify(token.slice(0, 30)));
  }
  const head = Buffer.from('{"alg":"HS256"}').toString('base64url');
  for (const payload of ['not json', '[1]', '"a string"', 'null']) {
    const signingInput = `${head}.${Buffer.from(payload).toString('base64url')}`;
    const token = `${signingInput}.${createHmac('sha256', SECRET).update(signingInput).digest('base64url')}`;
    await rejected(t, v, token, /not a JWT/, `claims ${payload}`);
  }
});

t.test('JWKS: the document is cached; a kid not in it refetches, after the cooldown (key rotation)', async (t) => {
  const next = rsaKeys();
  const provider = await idp(t, { keys: [jwk(rsa.publicKey, 'r1')] });
  const v = new ConsoleJwtVerifier(settings({ jwksUrl: provider.url }), { cooldownMs: 50 });
  t.equal((await v.verify(signRs256(claimsFor('u', ISS, AUD), rsa.privateKey, { kid: 'r1' }))).subject, 'u');
  t.equal((await v.verify(signRs256(claimsFor('u', ISS, AUD), rsa.privateKey, { kid: 'r1' }))).subject, 'u');
  t.equal(provider.hits.jwks, 1, 'served from the cache');
  provider.serve({ keys: [jwk(rsa.publicKey, 'r1'), jwk(next.publicKey, 'r2')] });
  await sleep(60);
  t.equal((await v.verify(signRs256(claimsFor('u', ISS, AUD), next.privateKey, { kid: 'r2' }))).subject, 'u', 'a rotated-in key is found');
  t.equal(provider.hits.jwks, 2);
});

t.test('JWKS: within the cooldown an unknown kid does not refetch', async (t) => {
  const next = rsaKeys();
  const provider = await idp(t, { keys: [jwk(rsa.publicKey, 'r1')] });
  const v = new ConsoleJwtVerifier(settings({ jwksUrl: provider.url }));
  t.equal((await v.verify(signRs256(claimsFor('u', ISS, AUD), rsa.privateKey, { kid: 'r1' }))).subject, 'u');
  provider.serve({ keys: [jwk(rsa.publicKey, 'r1'), jwk(next.publicKey, 'r2')] });
  for (const kid of ['r2', 'made-up-1', 'made-up-2']) {
    await rejected(t, v, signRs256(claimsFor('u', ISS, AUD), next.privateKey, { kid }), /signature/, `kid ${kid}`);
  }
  t.equal(provider.hits.jwks, 1, 'tokens with made-up kids do not make us fetch');
});

t.test('JWKS: jwksCacheTtlMs bounds how long a document is used; a failing provider leaves the last one in use', async (t) => {
  const provider = await idp(t, { keys: [jwk(rsa.publicKey, 'r1')] });
  const v = new ConsoleJwtVerifier(settings({ jwksUrl: provider.url, jwksCacheTtlMs: 50 }));
  const token = signRs256(claimsFor('u', ISS, AUD), rsa.privateKey, { kid: 'r1' });
  t.equal((await v.verify(token)).subject, 'u');
  await sleep(60);
  t.equal((await v.verify(token)).subject, 'u');
  t.equal(provider.hits.jwks, 2, 'fetched again once the TTL passed');
  provider.serve(503);
  await sleep(60);
  t.equal((await v.verify(token)).subject, 'u', 'the provider answers 503: the keys it served last stay in use');
  t.equal(provider.hits.jwks, 3);
});

t.test('JWKS provider down, failing, hanging or redirecting: a clear refusal, soon, and no hammering', async (t) => {
  const token = signRs256(claimsFor('u', ISS, AUD), rsa.privateKey, { kid: 'r1' });

  const gone = http.createServer();
  await new Promise<void>((r) => gone.listen(0, '127.0.0.1', r));
  const port = (gone.address() as AddressInfo).port;
  await new Promise<void>((r) => gone.close(() => r()));
  const down = new ConsoleJwtVerifier(settings({ jwksUrl: `http://127.0.0.1:${port}/jwks` }));
  await rejected(t, down, token, /keys could not be fetched/, 'nothing listening');

  const failing = await idp(t, 500);
  const v = new ConsoleJwtVerifier(settings({ jwksUrl: failing.url }));
  await rejected(t, v, token, /keys could not be fetched/, 'HTTP 500');
  await rejected(t, v, token, /keys could not be fetched/, 'HTTP 500, again');
  t.equal(failing.hits.jwks, 1, 'a failed fetch is not repeated within the cooldown');

  const hanging = await idp(t, 'hang');
  const slow = new ConsoleJwtVerifier(settings({ jwksUrl: hanging.url }), { timeoutMs: 300 });
  const started = Date.now();
  await rejected(t, slow, token, /keys could not be fetched/, 'no answer');
  t.ok(Date.now() - started < 3_000, `given up after the timeout (${Date.now() - started} ms), not hung`);

  const moved = await idp(t, 'redirect');
  const redirected = new ConsoleJwtVerifier(settings({ jwksUrl: moved.url }));
  await rejected(t, redirected, token, /keys could not be fetched/, 'a redirect');
  t.equal(moved.hits.moved, 0, 'redirects are not followed');

  const garbage = await idp(t, 'not json');
  await rejected(t, new ConsoleJwtVerifier(settings({ jwksUrl: garbage.url })), token, /keys could not be fetched/, 'not a JWKS');
  const noKeys = await idp(t, { keys: 'none' });
  await rejected(t, new ConsoleJwtVerifier(settings({ jwksUrl: noKeys.url })), token, /keys could not be fetched/, 'no keys array');
});

t.test('without an issuer console sessions are off; an issuer without keys fails at boot', async (t) => {
  const off = new ConsoleJwtVerifier(settings({ issuer: '' }));
  t.equal(off.enabled, false);
  await t.rejects(off.verify(signHs256(claimsFor('u', '', AUD), SECRET)), { name: 'JwtRejected' });
  t.throws(() => new ConsoleJwtVerifier(settings()), /none of jwksUrl, publicKeyPem, sharedSecret/);
  t.throws(() => new ConsoleJwtVerifier(settings({ publicKeyPem: '-----BEGIN PUBLIC KEY-----\nnot a key\n-----END PUBLIC KEY-----' })), 'a broken PEM fails at boot');
});
