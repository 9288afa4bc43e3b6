import { generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import t from 'tap';
import { Webhook } from 'standardwebhooks';
import { Webhook as SvixWebhook } from 'svix';
import { standardHeaders, standardSecret } from '../../../src/delivery/signing/signing.js';
import { verifyStandard } from '../../../src/verify/index.js';

// verifyStandard against signatures made by the real libraries (standardwebhooks,
// svix), by node:crypto Ed25519 (v1a), and by the service's own signing code.

const now = Date.UTC(2026, 10, 27, 6, 0, 0);
const ts = Math.floor(now / 1000);
const payload = '{"type":"order.created","data":{"id":"o_1","note":"caf\u00e9"}}';
const newSecret = () => `whsec_${randomBytes(32).toString('base64')}`;

function ed25519() {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const x = publicKey.export({ format: 'jwk' }).x!;
  const whpk = `whpk_${Buffer.from(x, 'base64url').toString('base64')}`;
  const signV1a = (id: string, timestamp: number, body: string | Buffer) =>
    `v1a,${sign(null, Buffer.concat([Buffer.from(`${id}.${timestamp}.`), Buffer.from(body)]), privateKey).toString('base64')}`;
  return { whpk, signV1a };
}

t.test('standardwebhooks and svix signatures verify', async (t) => {
  const secret = newSecret();
  const lib = new Webhook(secret).sign('msg_1', new Date(ts * 1000), payload);
  const headers = { 'webhook-id': 'msg_1', 'webhook-timestamp': String(ts), 'webhook-signature': lib };
  t.match(await verifyStandard({ body: payload, headers, secrets: [secret], now }), { ok: true, id: 'msg_1', timestamp: ts, version: 'v1', keyIndex: 0 });
  t.match(await verifyStandard({ body: new TextEncoder().encode(payload), headers, secrets: secret, now }), { ok: true }, 'raw bytes as the body, one secret as a string');
  t.match(await verifyStandard({ body: Buffer.from(payload), headers, secrets: [secret], now }), { ok: true }, 'a Node Buffer as the body');
  t.match(await verifyStandard({ body: payload, headers, secrets: [secret.slice(6)], now }), { ok: true }, 'the whsec_ prefix is optional');

  const svixSig = new SvixWebhook(secret).sign('msg_2', new Date(ts * 1000), payload);
  const svixHeaders = { 'svix-id': 'msg_2', 'svix-timestamp': String(ts), 'svix-signature': svixSig };
  t.match(await verifyStandard({ body: payload, headers: svixHeaders, secrets: [secret], now }), { ok: true, id: 'msg_2' }, 'svix signs; svix-* header names are read');
  const asWebhook = { 'Webhook-Id': 'msg_2', 'WEBHOOK-TIMESTAMP': String(ts), 'webhook-signature': svixSig };
  t.match(await verifyStandard({ body: payload, headers: asWebhook, secrets: [secret], now }), { ok: true }, 'header names in any case');
  t.match(await verifyStandard({ body: payload, headers: new Headers(asWebhook), secrets: [secret], now }), { ok: true }, 'a Headers instance');
});

t.test('what the service sends verifies, with either secret during a rotation', async (t) => {
  // Workspace secrets as the service stores them: whsec_ + base64url.
  const older = { keyId: 'sig_old', secret: `whsec_${randomBytes(32).toString('base64url')}` };
  const newer = { keyId: 'sig_new', secret: `whsec_${randomBytes(32).toString('base64url')}` };
  const body = Buffer.from(payload);
  const headers = standardHeaders([newer, older], { eventId: 'evt_42', body }, now);
  t.match(await verifyStandard({ body, headers, secrets: [standardSecret(newer.secret)], now }), { ok: true, id: 'evt_42', keyIndex: 0 });
  t.match(await verifyStandard({ body, headers, secrets: [standardSecret(older.secret)], now }), { ok: true }, 'the older key alone');
  t.match(await verifyStandard({ body, headers, secrets: [newSecret(), standardSecret(older.secret)], now }), { ok: true, keyIndex: 1 }, 'several secrets: any may match');
  t.match(await verifyStandard({ body, headers, secrets: [older.secret], now }), { ok: true }, 'the base64url form of the secret works too');
  // Signed now (the libraries check against their own clock): the real library and the verifier agree.
  const live = standardHeaders([newer, older], { eventId: 'evt_43', body }, Date.now());
  t.doesNotThrow(() => new Webhook(standardSecret(older.secret)).verify(body, live), 'standardwebhooks accepts it');
  t.match(await verifyStandard({ body, headers: live, secrets: [standardSecret(older.secret)] }), { ok: true, id: 'evt_43' }, 'and so does verifyStandard on the real clock');
  t.match(await verifyStandard({ body: Buffer.concat([body, Buffer.from(' ')]), headers, secrets: [standardSecret(newer.secret)], now }), { ok: false, reason: 'no_matching_signature' });
});

t.test('v1a (Ed25519) entries verify with a whpk_ public key; any matching entry passes', async (t) => {
  const { whpk, signV1a } = ed25519();
  const secret = newSecret();
  const v1a = signV1a('msg_a', ts, payload);
  const base = { 'webhook-id': 'msg_a', 'webhook-timestamp': String(ts) };
  t.match(await verifyStandard({ body: payload, headers: { ...base, 'webhook-signature': v1a }, publicKeys: [whpk], now }), { ok: true, version: 'v1a', keyIndex: 0 });
  const v1 = new Webhook(secret).sign('msg_a', new Date(ts * 1000), payload);
  const both = { ...base, 'webhook-signature': `v1,${Buffer.alloc(32).toString('base64')} ${v1a} ${v1}` };
  t.match(await verifyStandard({ body: payload, headers: both, secrets: [secret], now }), { ok: true, version: 'v1' }, 'v1 among a wrong v1 and a v1a');
  t.match(await verifyStandard({ body: payload, headers: both, publicKeys: [ed25519().whpk, whpk], now }), { ok: true, version: 'v1a', keyIndex: 1 }, 'v1a with the second public key');
  t.match(await verifyStandard({ body: `${payload} `, headers: both, secrets: [secret], publicKeys: [whpk], now }), { ok: false, reason: 'no_matching_signature' }, 'a tampered body fails both kinds');
  t.match(await verifyStandard({ body: payload, headers: { ...base, 'webhook-signature': v1a }, secrets: [secret], now }), { ok: false, reason: 'no_matching_signature' }, 'a v1a entry with only secrets given');
  t.match(await verifyStandard({ body: payload, headers: { ...base, 'webhook-signature': v1a }, publicKeys: [ed25519().whpk], now }), { ok: false, reason: 'no_matching_signature' }, 'another public key');
  await t.rejects(verifyStandard({ body: payload, headers: both, publicKeys: ['whpk_AAAA'], now }), TypeError, 'a public key that is not 32 bytes is an argument mistake');
});

t.test('each refusal names its reason', async (t) => {
  const secret = newSecret();
  const headers = { 'webhook-id': 'msg_r', 'webhook-timestamp': String(ts), 'webhook-signature': new Webhook(secret).sign('msg_r', new Date(ts * 1000), payload) };
  const check = (over: Partial<Parameters<typeof verifyStandard>[0]>) => verifyStandard({ body: payload, headers, secrets: [secret], now, ...over });
  t.match(await check({ body: payload.replace('o_1', 'o_2') }), { ok: false, reason: 'no_matching_signature', message: /no signature entry verifies/ }, 'tampered body');
  t.match(await check({ secrets: [newSecret()] }), { ok: false, reason: 'no_matching_signature' }, 'wrong secret');
  t.match(await check({ headers: { ...headers, 'webhook-id': 'msg_other' } }), { ok: false, reason: 'no_matching_signature' }, 'another id');
  t.match(await check({ now: now + 300_000 }), { ok: true }, 'exactly at the tolerance: accepted');
  t.match(await check({ now: now + 301_000 }), { ok: false, reason: 'timestamp_too_old' });
  t.match(await check({ now: now - 301_000 }), { ok: false, reason: 'timestamp_in_future' });
  t.match(await check({ now: now + 3_600_000, toleranceSeconds: 7200 }), { ok: true }, 'a wider tolerance');
  t.match(await check({ headers: { ...headers, 'webhook-timestamp': '17e8' } }), { ok: false, reason: 'bad_format' }, 'timestamp not digits');
  t.match(await check({ headers: { ...headers, 'webhook-signature': 'garbage' } }), { ok: false, reason: 'bad_format' }, 'no entry');
  t.match(await check({ headers: { ...headers, 'webhook-signature': 'v2,AAAA v1,!!!' } }), { ok: false, reason: 'bad_format' }, 'unknown version and undecodable entries only');
  t.match(await check({ headers: { ...headers, 'webhook-timestamp': [String(ts), String(ts)] } }), { ok: false, reason: 'bad_format' }, 'a timestamp given twice');
  for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature']) {
    t.match(await check({ headers: { ...headers, [name]: undefined } }), { ok: false, reason: 'missing_header', message: new RegExp(name) }, `${name} missing`);
    t.match(await check({ headers: { ...headers, [name]: '' } }), { ok: false, reason: 'missing_header' }, `${name} empty`);
  }
  t.match(await check({ headers: {} }), { ok: false, reason: 'missing_header' }, 'no header at all');
  await t.rejects(check({ secrets: [] }), TypeError, 'no secret and no public key is an argument mistake');
  await t.rejects(check({ secrets: ['whsec_not base64!'] }), TypeError);
});
