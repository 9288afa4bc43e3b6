import { createPrivateKey, createPublicKey, randomBytes, verify } from 'node:crypto';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { Webhook as SvixWebhook } from 'svix';
import { backendEnv, freshBackends } from '../../helpers/backends.js';
import { standardAttempts, testDatabase } from '../../helpers/delivery.js';
import { bootstrapDatabase, clientFor, startTestNode } from '../../helpers/nodes.js';
import type { Received } from '../../helpers/receiver.js';
import { KeyEncryption } from '../../../src/storage/key-encryption.js';
import { verifyStandard } from '../../../src/verify/index.js';

/**
 * ed25519 signing keys (issue 25): a `standard` queue's deliveries carry a
 * `v1` entry per HMAC key (standardwebhooks and svix verify it) and a `v1a`
 * entry per ed25519 key, verified here with node:crypto and the `whpk_`
 * public key the API publishes — on every retry, never for a tampered body,
 * and no longer once the key is revoked. The private key is in no API answer
 * and not in plain text in the database; an ed25519 key is never the key of
 * signed-request ingress.
 */
const KEK = randomBytes(32).toString('base64');
const backends = await freshBackends(t);
const creds = await bootstrapDatabase(backends.databaseUrl);
const node = await startTestNode(t, backends, { signing: { keyEncryptionKey: KEK } });
const api = clientFor(node.port, creds);
const sql = await testDatabase(t, backends);

/** Every signing-keys answer, to check none holds a private key. */
const answers: unknown[] = [];
async function manage(method: string, path: string, body?: unknown) {
  const res = await api.manage(method, path, body);
  answers.push(res.body);
  return res;
}

const headersOf = (r: Received) => ({
  'webhook-id': String(r.headers['webhook-id']),
  'webhook-timestamp': String(r.headers['webhook-timestamp']),
  'webhook-signature': String(r.headers['webhook-signature']),
});
const entries = (r: Received, version: string) =>
  String(r.headers['webhook-signature'])
    .split(' ')
    .filter((e) => e.startsWith(`${version},`))
    .map((e) => e.slice(version.length + 1));
/** The raw 32 bytes of `whpk_…`, wrapped as a JWK. */
const publicKeyOf = (whpk: string) =>
  createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(whpk.slice(5), 'base64').toString('base64url') }, format: 'jwk' });
function v1aVerifies(whpk: string, r: Pick<Received, 'headers'>, body: Buffer | string): boolean {
  const data = Buffer.concat([Buffer.from(`${r.headers['webhook-id']}.${r.headers['webhook-timestamp']}.`), Buffer.from(body)]);
  return entries(r as Received, 'v1a').some((sig) => verify(null, data, publicKeyOf(whpk), Buffer.from(sig, 'base64')));
}
function libraries(secret: string, r: Received): [string | null, string | null] {
  const run = (f: () => unknown) => {
    try {
      f();
      return null;
    } catch (err) {
      return (err as Error).message || 'refused';
    }
  };
  return [run(() => new StandardWebhook(secret).verify(r.body.toString(), headersOf(r))), run(() => new SvixWebhook(secret).verify(r.body.toString(), headersOf(r)))];
}

t.test('an ed25519 key alone is no key for signed-request ingress', async (t) => {
  const ed = await manage('POST', api.tenantPath('/signing-keys'), { algorithm: 'ed25519' });
  t.equal(ed.status, 201, JSON.stringify(ed.body));
  const q = await manage('PUT', api.tenantPath('/queues/signed-only'), { authMode: 'signed_request' });
  t.ok(q.status < 300, JSON.stringify(q.body));
  const paused = await api.postEvent('signed-only', '{}');
  t.equal(paused.status, 409);
  t.equal(paused.body.error?.code, 'queue_paused', 'the queue is paused: no HMAC key');
  const queues = await manage('GET', api.tenantPath('/queues'));
  t.match(queues.body.items.find((x: { name: string }) => x.name === 'signed-only'), { state: 'paused' }, 'listed as paused');
  t.equal((await manage('DELETE', api.tenantPath(`/signing-keys/${ed.body.keyId}`))).status, 204);
});

t.test('a standard queue with an HMAC and an ed25519 key: v1 and v1a on every attempt; revocation; nothing leaks', async (t) => {
  const hmac = await manage('POST', api.tenantPath('/signing-keys'));
  t.equal(hmac.status, 201);
  t.equal(hmac.body.algorithm, 'hmac-sha256', 'HMAC answers name their algorithm');
  const ed = await manage('POST', api.tenantPath('/signing-keys'), { algorithm: 'ed25519' });
  t.equal(ed.status, 201);
  t.same(Object.keys(ed.body).sort(), ['algorithm', 'createdAt', 'keyId', 'publicKey', 'tenantPublicId'], 'the answer: no secret, no private key');
  t.equal(ed.body.algorithm, 'ed25519');
  t.match(ed.body.publicKey, /^whpk_[A-Za-z0-9+/]{43}=$/, 'whpk_ and the standard base64 of 32 bytes');
  const bad = await manage('POST', api.tenantPath('/signing-keys'), { algorithm: 'rsa' });
  t.equal(bad.status, 400, 'an unknown algorithm is refused');

  const listed = await manage('GET', api.tenantPath('/signing-keys'));
  t.same(
    listed.body.data.map((k: Record<string, unknown>) => ({ keyId: k.keyId, algorithm: k.algorithm, publicKey: k.publicKey })),
    [
      { keyId: ed.body.keyId, algorithm: 'ed25519', publicKey: ed.body.publicKey },
      { keyId: hmac.body.keyId, algorithm: 'hmac-sha256', publicKey: undefined },
    ],
    'both listed, newest first, the public key of the ed25519 one',
  );

  const { eventId, attempts, receiver } = await standardAttempts(t, api);
  for (const [i, r] of attempts.entries()) {
    t.equal(r.headers['webhook-id'], eventId);
    t.equal(entries(r, 'v1').length, 1, `attempt ${i + 1}: one v1 entry`);
    t.equal(entries(r, 'v1a').length, 1, `attempt ${i + 1}: one v1a entry`);
    t.same(libraries(hmac.body.standardSecret, r), [null, null], `attempt ${i + 1}: v1 verifies with standardwebhooks and svix`);
    t.ok(v1aVerifies(ed.body.publicKey, r, r.body), `attempt ${i + 1}: v1a verifies with the published public key`);
    t.notOk(v1aVerifies(ed.body.publicKey, r, '{"type":"invoice.paid","amount":43}'), `attempt ${i + 1}: not for a tampered body`);
    const stale = { headers: { ...r.headers, 'webhook-timestamp': String(Number(r.headers['webhook-timestamp']) - 1) } };
    t.notOk(v1aVerifies(ed.body.publicKey, stale, r.body), `attempt ${i + 1}: not for another timestamp`);
    // The receivers' verifier (streamgate/verify, Web Crypto) on the real delivery: v1a alone, v1 alone, and a tampered body.
    t.match(await verifyStandard({ body: r.body, headers: r.headers, publicKeys: [ed.body.publicKey] }), { ok: true }, `attempt ${i + 1}: streamgate/verify accepts the v1a entry`);
    t.match(await verifyStandard({ body: r.body, headers: r.headers, secrets: [hmac.body.standardSecret] }), { ok: true }, `attempt ${i + 1}: and the v1 entry`);
    t.match(await verifyStandard({ body: '{"type":"invoice.paid","amount":43}', headers: r.headers, publicKeys: [ed.body.publicKey] }), { ok: false, reason: 'no_matching_signature' });
  }

  // At rest: the private key is encrypted. Decrypted with the deployment's key, it is the published key's pair…
  const [row] = await sql<Record<string, unknown>[]>`SELECT row_to_json(s)::text AS json, private_key_encrypted FROM signing_keys s WHERE key_id = ${ed.body.keyId}`;
  const pkcs8 = KeyEncryption.fromSetting(KEK)!.decrypt(String(row!.private_key_encrypted), ed.body.keyId);
  const privateKey = createPrivateKey({ key: pkcs8, format: 'der', type: 'pkcs8' });
  t.equal(`whpk_${Buffer.from(createPublicKey(privateKey).export({ format: 'jwk' }).x!, 'base64url').toString('base64')}`, ed.body.publicKey, 'the stored private key is the pair of the published one');
  // …and none of its plain forms is in the row, nor in any answer.
  const seed = Buffer.from(privateKey.export({ format: 'jwk' }).d!, 'base64url');
  const plainForms = [seed.toString('base64'), seed.toString('base64url'), seed.toString('hex'), pkcs8.toString('base64'), pkcs8.toString('hex'), privateKey.export({ format: 'pem', type: 'pkcs8' }).toString().split('\n')[1]!];
  const rowText = String(row!.json);
  t.ok(plainForms.every((f) => !rowText.toLowerCase().includes(f.toLowerCase())), 'no plain form of the private key in the database row');
  t.ok(rowText.includes(ed.body.publicKey), 'the public key is stored as published');

  // Revoked: the next delivery has its v1 entry only.
  t.equal((await manage('DELETE', api.tenantPath(`/signing-keys/${ed.body.keyId}`))).status, 204);
  const after = await api.postEvent('std', '{"n":2}');
  await receiver.waitFor((rs) => rs.some((r) => r.headers['webhook-id'] === after.body.eventId), 30_000, 'the event after the revocation');
  const revoked = receiver.requests.find((r) => r.headers['webhook-id'] === after.body.eventId)!;
  t.same(entries(revoked, 'v1a'), [], 'no v1a entry after the revocation');
  t.same(libraries(hmac.body.standardSecret, revoked), [null, null], 'v1 still verifies');
  const relisted = await manage('GET', api.tenantPath('/signing-keys'));
  t.same(relisted.body.data.map((k: { keyId: string }) => k.keyId), [hmac.body.keyId], 'the revoked key is no longer listed');

  const everything = JSON.stringify(answers);
  t.ok(plainForms.every((f) => !everything.includes(f)), `no plain form of the private key in any of ${answers.length} signing-keys answers`);
  t.notOk(/private|pkcs8|"d"/i.test(everything), 'no private-key field in any answer');
});

t.test('without signing.keyEncryptionKey, ed25519 keys are refused with 409 and HMAC keys work', async (t) => {
  const bare = await startTestNode(t, backends, { roles: ['management'] });
  const other = clientFor(bare.port, creds);
  const refused = await other.manage('POST', other.tenantPath('/signing-keys'), { algorithm: 'ed25519' });
  t.equal(refused.status, 409);
  t.equal(refused.body.error?.code, 'conflict');
  t.match(refused.body.error?.message, /signing\.keyEncryptionKey/);
  const made = await other.manage('POST', other.tenantPath('/signing-keys'), {});
  t.equal(made.status, 201);
  t.equal(made.body.algorithm, 'hmac-sha256');
});

const CLI = fileURLToPath(new URL('../../../dist/cli.js', import.meta.url));

t.test('rotating the key encryption key: `streamgate admin reencrypt-signing-keys` moves stored keys to the new one', async (t) => {
  const made = await manage('POST', api.tenantPath('/signing-keys'), { algorithm: 'ed25519' });
  t.equal(made.status, 201);
  const keyId = made.body.keyId as string;
  const stored = async () => (await sql<{ stored: string }[]>`SELECT private_key_encrypted AS stored FROM signing_keys WHERE key_id = ${keyId}`)[0]!.stored;
  const before = await stored();
  const NEW_KEK = randomBytes(32).toString('hex');
  const cli = (env: Record<string, string>) =>
    new Promise<{ status: number; stdout: string; stderr: string }>((resolve) => {
      execFile(process.execPath, [CLI, 'admin', 'reencrypt-signing-keys'], { env: { ...process.env, ...backendEnv(backends, 0), LOG_LEVEL: 'warn', ...env } }, (err, stdout, stderr) =>
        resolve({ status: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      );
    });

  const wrong = await cli({ STREAMGATE_KEY_ENCRYPTION_KEY: NEW_KEK });
  t.equal(wrong.status, 1, 'the old key not given as previous: exit 1');
  t.match(wrong.stderr, new RegExp(`decrypt with none of the configured keys.*${keyId}`), 'naming the key it cannot read');
  t.equal(await stored(), before, 'and changing nothing');

  const rotated = await cli({ STREAMGATE_KEY_ENCRYPTION_KEY: NEW_KEK, STREAMGATE_PREVIOUS_KEY_ENCRYPTION_KEYS: KEK });
  t.equal(rotated.status, 0, rotated.stderr);
  t.match(rotated.stdout, /[1-9]\d* re-encrypted under the current key/);
  t.notOk(`${rotated.stdout}${rotated.stderr}`.includes(NEW_KEK) || `${rotated.stdout}${rotated.stderr}`.includes(KEK), 'no key printed');
  const after = await stored();
  t.not(after, before, 'the stored ciphertext changed');
  const pkcs8 = KeyEncryption.fromSetting(NEW_KEK)!.decrypt(after, keyId);
  const privateKey = createPrivateKey({ key: pkcs8, format: 'der', type: 'pkcs8' });
  t.equal(`whpk_${Buffer.from(createPublicKey(privateKey).export({ format: 'jwk' }).x!, 'base64url').toString('base64')}`, made.body.publicKey, 'the new key alone opens it: the same key pair');

  const again = await cli({ STREAMGATE_KEY_ENCRYPTION_KEY: NEW_KEK, STREAMGATE_PREVIOUS_KEY_ENCRYPTION_KEYS: KEK });
  t.equal(again.status, 0);
  t.match(again.stdout, /^ed25519 signing keys: 0 re-encrypted under the current key, [1-9]\d* already under it/, 'idempotent');
});
