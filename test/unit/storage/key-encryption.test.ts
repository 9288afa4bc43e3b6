import { randomBytes } from 'node:crypto';
import { inspect } from 'node:util';
import t from 'tap';
import { KeyEncryption } from '../../../src/storage/key-encryption.js';

const hexKey = randomBytes(32).toString('hex');
const b64Key = randomBytes(32).toString('base64');

t.test('round trip, with a hex or a base64 key', async (t) => {
  for (const setting of [hexKey, b64Key, ` ${b64Key}\n`]) {
    const enc = KeyEncryption.fromSetting(setting)!;
    const plain = randomBytes(48);
    const stored = enc.encrypt(plain, 'sig_1');
    t.match(stored, /^v1\.[A-Za-z0-9+/=]+\.[A-Za-z0-9+/=]+\.[A-Za-z0-9+/=]+$/);
    t.notOk(stored.includes(plain.toString('base64')), 'the plaintext is not in the stored text');
    t.same(enc.decrypt(stored, 'sig_1'), plain);
    t.not(enc.encrypt(plain, 'sig_1'), stored, 'a fresh IV each time');
  }
});

t.test('unset, or not 32 bytes', async (t) => {
  t.equal(KeyEncryption.fromSetting(''), null);
  t.equal(KeyEncryption.fromSetting('  '), null);
  t.throws(() => KeyEncryption.fromSetting('abcd'), /32 bytes/);
});

t.test('a wrong key, another key id or a tampered ciphertext fails', async (t) => {
  const enc = KeyEncryption.fromSetting(hexKey)!;
  const other = KeyEncryption.fromSetting(randomBytes(32).toString('hex'))!;
  const stored = enc.encrypt(Buffer.from('private key bytes'), 'sig_1');
  t.throws(() => other.decrypt(stored, 'sig_1'), /does not decrypt/, 'wrong key');
  t.throws(() => enc.decrypt(stored, 'sig_2'), /does not decrypt/, 'the ciphertext of another row');
  const [v, iv, tag, ct] = stored.split('.') as [string, string, string, string];
  const flipped = Buffer.from(ct, 'base64');
  flipped[0]! ^= 1;
  t.throws(() => enc.decrypt([v, iv, tag, flipped.toString('base64')].join('.'), 'sig_1'), /does not decrypt/, 'tampered ciphertext');
  const badTag = Buffer.from(tag, 'base64');
  badTag[3]! ^= 0x80;
  t.throws(() => enc.decrypt([v, iv, badTag.toString('base64'), ct].join('.'), 'sig_1'), /does not decrypt/, 'tampered tag');
  t.throws(() => enc.decrypt('v2.x.y.z', 'sig_1'), /not an encrypted signing key/);
});

t.test('the key is never printed', async (t) => {
  const enc = KeyEncryption.fromSetting(hexKey)!;
  t.notOk(inspect(enc).includes(hexKey), 'inspect');
  t.notOk(JSON.stringify({ enc }).includes(hexKey), 'JSON');
  t.notOk(inspect(enc, { showHidden: true }).includes(Buffer.from(hexKey, 'hex').toString('base64')), 'inspect, hidden fields too');
});

t.test('rotation: previous keys decrypt, the current one encrypts; reencrypt moves a stored key to the current one', async (t) => {
  const oldKey = randomBytes(32).toString('hex');
  const newKey = randomBytes(32).toString('base64');
  const before = KeyEncryption.fromSetting(oldKey)!;
  const stored = before.encrypt(Buffer.from('private key bytes'), 'sig_1');

  const rotated = KeyEncryption.fromSetting(newKey, [oldKey])!;
  t.equal(rotated.decrypt(stored, 'sig_1').toString(), 'private key bytes', 'a key stored before the rotation still decrypts');
  t.equal(rotated.open(stored, 'sig_1').current, false, 'and is known to be under a previous key');
  const fresh = rotated.encrypt(Buffer.from('new'), 'sig_2');
  t.throws(() => before.decrypt(fresh, 'sig_2'), /does not decrypt/, 'new keys are encrypted under the new key only');

  const moved = rotated.reencrypt(stored, 'sig_1')!;
  t.type(moved, 'string');
  t.equal(KeyEncryption.fromSetting(newKey)!.decrypt(moved, 'sig_1').toString(), 'private key bytes', 'after reencrypt the new key alone decrypts it');
  t.equal(rotated.reencrypt(moved, 'sig_1'), null, 'already under the current key: nothing to do');
  t.throws(() => rotated.reencrypt(stored, 'sig_9'), /does not decrypt/, 'another row\'s AAD still fails');
  t.throws(() => KeyEncryption.fromSetting(newKey, ['short']), /32 bytes/, 'a malformed previous key');
  t.throws(() => KeyEncryption.fromSetting('', [oldKey]), /needs signing.keyEncryptionKey/, 'previous keys without a current one');
});
