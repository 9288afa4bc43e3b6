import t from 'tap';
import { createHash } from 'node:crypto';
import { generateApiKey, hashSecret, parseApiKey, secretMatches } from '../../../src/auth/api-key.js';

const WIRE = /^qak_(key_[A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)$/;
const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest();

t.test('generated keys have the wire format qak_<keyId>.<secret>', async (t) => {
  const key = generateApiKey();
  const m = WIRE.exec(key.wire);
  t.ok(m, `wire form ${key.wire}`);
  t.equal(m?.[1], key.keyId, 'the key id is embedded');
  t.ok(key.keyId.startsWith('key_'));
});

t.test('the secret carries at least 192 random bits', async (t) => {
  const secret = WIRE.exec(generateApiKey().wire)![2]!;
  // base64url: 6 bits per character, so 192 bits need 32 characters.
  t.ok(secret.length >= 32, `secret length ${secret.length}`);
  const samples = Array.from({ length: 4000 }, () => WIRE.exec(generateApiKey().wire)![2]!);
  t.equal(new Set(samples).size, samples.length, 'no two secrets repeat');
  // log2 of the distinct values seen at each character position: fixed parts add ~0 bits.
  let bits = 0;
  for (let i = 0; i < secret.length; i++) bits += Math.log2(new Set(samples.map((s) => s[i])).size);
  t.ok(bits >= 192, `about ${bits.toFixed(1)} bits observed`);
});

t.test('parseApiKey round-trips a generated key', async (t) => {
  for (let i = 0; i < 50; i++) {
    const key = generateApiKey();
    const parsed = parseApiKey(key.wire);
    t.ok(parsed);
    if (!parsed) return;
    t.equal(parsed.keyId, key.keyId);
    t.equal(`qak_${parsed.keyId}.${parsed.secret}`, key.wire);
    t.ok(secretMatches(parsed.secret, key.secretHash), 'the parsed secret matches the stored hash');
  }
});

t.test('parseApiKey rejects malformed keys', async (t) => {
  const good = generateApiKey();
  const [, keyId, secret] = WIRE.exec(good.wire)!;
  const bad: Record<string, string> = {
    empty: '',
    'missing prefix': `${keyId}.${secret}`,
    'wrong prefix': `qk_${keyId}.${secret}`,
    'missing dot': `qak_${keyId}${secret}`,
    'empty secret': `qak_${keyId}.`,
    'empty key id': `qak_.${secret}`,
    'key id without key_': `qak_${keyId!.slice(4)}.${secret}`,
    'space inside': `qak_${keyId}. ${secret}`,
    'leading space': ` ${good.wire}`,
    'trailing space': `${good.wire} `,
    'trailing newline': `${good.wire}\n`,
    'two dots': `qak_${keyId}.${secret}.${secret}`,
    'very long': `qak_${keyId}.${'A'.repeat(10_000)}`,
    'non-ascii': `qak_${keyId}.${secret}é`,
  };
  for (const [why, value] of Object.entries(bad)) t.equal(parseApiKey(value), null, why);
});

t.test('the stored hash is SHA-256 of the secret', async (t) => {
  const key = generateApiKey();
  const secret = WIRE.exec(key.wire)![2]!;
  t.ok(key.secretHash.equals(sha256(secret)), 'secretHash equals an independent SHA-256');
  t.ok(hashSecret('abc').equals(sha256('abc')));
  t.equal(hashSecret('abc').toString('hex'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad', 'FIPS 180-2 test vector');
  t.notOk(key.wire.includes(key.secretHash.toString('hex')), 'the wire form does not reveal the hash');
});

t.test('secretMatches', async (t) => {
  const key = generateApiKey();
  const secret = WIRE.exec(key.wire)![2]!;
  t.equal(secretMatches(secret, key.secretHash), true);
  t.equal(secretMatches(secret.slice(0, -1), key.secretHash), false, 'truncated secret');
  t.equal(secretMatches(`${secret}x`, key.secretHash), false, 'extended secret');
  t.equal(secretMatches(WIRE.exec(generateApiKey().wire)![2]!, key.secretHash), false, "another key's secret");
  t.equal(secretMatches(secret, Buffer.alloc(0)), false, 'empty stored hash does not throw');
  t.equal(secretMatches(secret, key.secretHash.subarray(0, 16)), false, 'short stored hash does not throw');
});
