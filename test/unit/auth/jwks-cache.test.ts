import t from 'tap';
import { JwksCache, parseJwks } from '../../../src/auth/jwks-cache.js';
import { ecKeys, rsaKeys } from '../../helpers/jwt.js';

const rsa = rsaKeys();
const ec = ecKeys();
const rsaJwk = { ...rsa.publicKey.export({ format: 'jwk' }), kid: 'r1', use: 'sig' };
const ecJwk = { ...ec.publicKey.export({ format: 'jwk' }), kid: 'e1' };

t.test('keeps usable public signature keys only', async (t) => {
  const keys = parseJwks({
    keys: [
      rsaJwk,
      ecJwk,
      { ...rsaJwk, kid: 'enc', use: 'enc' },
      { ...rsa.privateKey.export({ format: 'jwk' }), kid: 'private' },
      { kty: 'oct', k: 'c2VjcmV0', kid: 'sym' },
      { kty: 'RSA', kid: 'broken', n: 'x' },
      'junk',
      null,
    ],
  });
  t.same(keys.map((k) => k.kid), ['r1', 'e1']);
  t.throws(() => parseJwks({ nokeys: true }), /no keys array/);
});

t.test('caches the document, refetches for an unknown kid at most once per cooldown', async (t) => {
  let fetches = 0;
  let doc: unknown = { keys: [rsaJwk] };
  const cache = new JwksCache('https://id.example.test/jwks', 60_000, 50, async () => {
    fetches++;
    return doc;
  });
  t.equal((await cache.find('r1'))?.kid, 'r1');
  t.equal((await cache.find('r1'))?.kid, 'r1');
  t.equal(fetches, 1, 'served from the cache');
  t.equal(await cache.find('e1'), null, 'unknown kid within the cooldown: no refetch');
  t.equal(fetches, 1);
  await new Promise((r) => setTimeout(r, 60));
  doc = { keys: [rsaJwk, ecJwk] };
  t.equal((await cache.find('e1'))?.kid, 'e1', 'a rotated-in key is found after the cooldown');
  t.equal(fetches, 2);
});

t.test('a token without kid uses the only key, never one of several', async (t) => {
  const single = new JwksCache('u', 60_000, 50, async () => ({ keys: [rsaJwk] }));
  t.equal((await single.find(null))?.kid, 'r1');
  const several = new JwksCache('u', 60_000, 60_000, async () => ({ keys: [rsaJwk, ecJwk] }));
  t.equal(await several.find(null), null);
});

t.test('a failing provider surfaces as an error, and is not hammered', async (t) => {
  let fetches = 0;
  const cache = new JwksCache('u', 60_000, 60_000, async () => {
    fetches++;
    throw new Error('provider down');
  });
  await t.rejects(cache.find('r1'), /provider down/);
  t.equal(await cache.find('r1'), null, 'within the cooldown the failed fetch is not repeated');
  t.equal(fetches, 1);
});
