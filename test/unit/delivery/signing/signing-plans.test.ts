import { generateKeyPairSync, randomBytes } from 'node:crypto';
import t from 'tap';
import { SigningPlans } from '../../../../src/delivery/signing/signing-plans.js';
import { KeyEncryption } from '../../../../src/storage/key-encryption.js';
import type { QueueLookupRepo } from '../../../../src/storage/queue-lookup-repo.js';
import type { SigningKeyRepo } from '../../../../src/storage/signing-key-repo.js';

const kek = KeyEncryption.fromSetting(randomBytes(32).toString('hex'))!;
const edRow = (keyId: string, encryption = kek) => ({
  keyId,
  privateKeyEncrypted: encryption.encrypt(generateKeyPairSync('ed25519').privateKey.export({ format: 'der', type: 'pkcs8' }), keyId),
});

function setup(opts: { signing: 'hmac' | 'standard'; hmac: string[]; ed: Array<{ keyId: string; privateKeyEncrypted: string }>; encryption?: KeyEncryption | null }) {
  const calls = { decrypt: 0, warn: [] as string[] };
  const queues = { settingsOf: async () => ({ outboundSigning: opts.signing }) } as unknown as QueueLookupRepo;
  const keys = {
    active: async () => opts.hmac.map((keyId) => ({ keyId, secret: `whsec_${keyId}`, createdAt: new Date() })),
    activeEd25519: async () => opts.ed,
  } as unknown as SigningKeyRepo;
  const encryption = opts.encryption === undefined ? kek : opts.encryption;
  const counting = encryption && ({ decrypt: (s: string, aad: string) => (calls.decrypt++, encryption.decrypt(s, aad)) } as unknown as KeyEncryption);
  // TTL 0: every call reloads the keys from the "database".
  const plans = new SigningPlans(queues, keys, 0, counting, { warn: (_o: unknown, msg: string) => void calls.warn.push(msg) } as never);
  return { plans, calls };
}
const record = { queueId: 'q1', workspaceId: 'w1' };

t.test('an ed25519 key is never the newest key; it joins the standard keys after the HMAC ones', async (t) => {
  const { plans } = setup({ signing: 'standard', hmac: ['sig_h2', 'sig_h1'], ed: [edRow('sig_e1')] });
  const plan = await plans.forRecord(record);
  t.equal(plan.key?.keyId, 'sig_h2', 'the newest HMAC key');
  t.same(plan.keys.map((k) => k.keyId), ['sig_h2', 'sig_h1', 'sig_e1']);
  t.equal((plan.keys[2] as { privateKey: { asymmetricKeyType?: string } }).privateKey.asymmetricKeyType, 'ed25519', 'a parsed KeyObject');
  const only = await setup({ signing: 'hmac', hmac: [], ed: [edRow('sig_e1')] }).plans.forRecord(record);
  t.equal(only.key, null, 'an hmac queue of a workspace with only an ed25519 key has no key');
});

t.test('the private key is decrypted once, not per attempt', async (t) => {
  const { plans, calls } = setup({ signing: 'standard', hmac: [], ed: [edRow('sig_e1')] });
  for (let i = 0; i < 5; i++) {
    // As a TTL expiry does: the workspace's keys are read again.
    (plans as unknown as { keys: { clear(): void } }).keys.clear();
    await plans.forRecord(record);
  }
  t.equal(calls.decrypt, 1, 'one decryption across five reloads');
  plans.invalidate();
  await plans.forRecord(record);
  t.equal(calls.decrypt, 2, 'a management write drops the parsed keys (a revoked key leaves memory)');
});

t.test('a key that does not decrypt is left out, with one warning naming no secret', async (t) => {
  const other = KeyEncryption.fromSetting(randomBytes(32).toString('hex'))!;
  const { plans, calls } = setup({ signing: 'standard', hmac: ['sig_h1'], ed: [edRow('sig_e1', other)] });
  t.same((await plans.forRecord(record)).keys.map((k) => k.keyId), ['sig_h1']);
  await plans.forRecord(record);
  t.equal(calls.warn.length, 1, 'warned once');
  t.match(calls.warn[0], /does not decrypt/);
  const unset = setup({ signing: 'standard', hmac: [], ed: [edRow('sig_e1')], encryption: null });
  t.same((await unset.plans.forRecord(record)).keys, [], 'no key encryption key: no v1a key');
  t.match(unset.calls.warn[0], /not set/);
});
