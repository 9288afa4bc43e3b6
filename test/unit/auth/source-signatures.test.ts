import t from 'tap';
import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { sign as githubSign } from '@octokit/webhooks-methods';
import {
  parseGithubSignature,
  parseShopifyHmac,
  parseStandardWebhooks,
  sourceSignatureMatches,
  standardWebhooksKey,
  standardWebhooksPrefix,
  textKey,
} from '../../../src/auth/source-signatures.js';

// Bytes a re-serialiser would change, and a non-ASCII character: signatures are over the raw bytes.
const BODY = '{ "id": "evt_1",\n  "name": "Zoë", "n": 1 }';
const body = Buffer.from(BODY);
const STANDARD_SECRET = `whsec_${Buffer.from('0123456789abcdef0123456789abcdef').toString('base64')}`;
const changed = (b: Buffer) => Buffer.concat([b.subarray(0, 5), Buffer.from([b[5]! ^ 1]), b.subarray(6)]);

t.test('standardWebhooksKey: whsec_ + base64, the decoded bytes are the key', async (t) => {
  t.same(standardWebhooksKey(STANDARD_SECRET), Buffer.from('0123456789abcdef0123456789abcdef'));
  t.same(standardWebhooksKey('whsec_AAEC'), Buffer.from([0, 1, 2]));
  t.same(standardWebhooksKey('whsec_AAE'), Buffer.from([0, 1]), 'padding optional');
  for (const bad of ['', 'whsec_', 'AAEC', 'whsec_!!!!', 'whsec_AAEC=', 'whsec_A', 'whsec_AA-_', 'sk_AAEC']) {
    t.equal(standardWebhooksKey(bad), null, JSON.stringify(bad));
  }
});

t.test("standard_webhooks: the library's signature verifies; a byte changed, another id or timestamp does not", async (t) => {
  const date = new Date(1_700_000_000_000);
  const signature = new Webhook(STANDARD_SECRET).sign('msg_1', date, BODY);
  const h = parseStandardWebhooks({ 'webhook-id': 'msg_1', 'webhook-timestamp': '1700000000', 'webhook-signature': signature });
  t.equal(h.id, 'msg_1');
  t.equal(h.timestamp, '1700000000');
  const key = standardWebhooksKey(STANDARD_SECRET)!;
  const check = (prefix: string, b: Buffer) => sourceSignatureMatches({ key, prefix, candidates: h.candidates }, b);
  t.ok(check(standardWebhooksPrefix('msg_1', '1700000000'), body));
  t.notOk(check(standardWebhooksPrefix('msg_1', '1700000000'), changed(body)), 'a byte changed');
  t.notOk(check(standardWebhooksPrefix('msg_2', '1700000000'), body), 'another id');
  t.notOk(check(standardWebhooksPrefix('msg_1', '1700000001'), body), 'another timestamp');
  const otherKey = standardWebhooksKey(`whsec_${Buffer.from('another key of 32 bytes, exactly').toString('base64')}`)!;
  t.notOk(sourceSignatureMatches({ key: otherKey, prefix: standardWebhooksPrefix('msg_1', '1700000000'), candidates: h.candidates }, body), 'another secret');
});

t.test('standard_webhooks: any v1 entry may match, other versions are ignored, work is bounded', async (t) => {
  const date = new Date(1_700_000_000_000);
  const ours = new Webhook(STANDARD_SECRET).sign('msg_1', date, BODY);
  const theirs = new Webhook(`whsec_${Buffer.from('old key').toString('base64')}`).sign('msg_1', date, BODY);
  const h = parseStandardWebhooks({ 'webhook-id': 'msg_1', 'webhook-timestamp': '1700000000', 'webhook-signature': `${theirs} v1a,abcd v2,${ours.slice(3)} ${ours}` });
  t.equal(h.candidates.length, 2, 'the two v1 entries; v1a and v2 ignored');
  t.ok(sourceSignatureMatches({ key: standardWebhooksKey(STANDARD_SECRET)!, prefix: standardWebhooksPrefix('msg_1', '1700000000'), candidates: h.candidates }, body));
  const only = parseStandardWebhooks({ 'webhook-id': 'm', 'webhook-signature': `v2,${ours.slice(3)} ${ours}` });
  t.equal(only.candidates.length, 1);
  t.equal(only.timestamp, '', 'a missing timestamp is left to the timestamp check');
  const many = parseStandardWebhooks({ 'webhook-id': 'm', 'webhook-signature': Array.from({ length: 50 }, () => ours).join(' ') });
  t.equal(many.candidates.length, 8);
});

t.test('standard_webhooks: a missing id or signature, or no well-formed v1 entry, is invalid_signature', async (t) => {
  const v1 = `v1,${Buffer.alloc(32).toString('base64')}`;
  const cases: Array<Record<string, string>> = [
    {},
    { 'webhook-id': 'm', 'webhook-timestamp': '1' },
    { 'webhook-timestamp': '1', 'webhook-signature': v1 },
    { 'webhook-id': 'm', 'webhook-signature': '' },
    { 'webhook-id': 'm', 'webhook-signature': 'v1,short' },
    { 'webhook-id': 'm', 'webhook-signature': `v2,${Buffer.alloc(32).toString('base64')}` },
    { 'webhook-id': 'm', 'webhook-signature': `v1=${Buffer.alloc(32).toString('base64')}` },
  ];
  for (const headers of cases) t.throws(() => parseStandardWebhooks(headers), { code: 'invalid_signature', status: 401 }, JSON.stringify(headers));
});

t.test("github: @octokit/webhooks-methods' signature verifies with the secret's UTF-8 bytes", async (t) => {
  const secret = 'It’s a Secret to Everybody';
  const header = await githubSign(secret, BODY);
  t.match(header, /^sha256=[0-9a-f]{64}$/);
  const check = (b: Buffer, s = secret) => sourceSignatureMatches({ key: textKey(s), prefix: '', candidates: [parseGithubSignature(header)] }, b);
  t.ok(check(body));
  t.notOk(check(changed(body)), 'a byte changed');
  t.notOk(check(body, 'another secret'), 'another secret');
  // GitHub's documented vector (docs.github.com, "Validating webhook deliveries").
  const documented = parseGithubSignature('sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17');
  t.ok(sourceSignatureMatches({ key: textKey("It's a Secret to Everybody"), prefix: '', candidates: [documented] }, Buffer.from('Hello, World!')));
  for (const bad of [undefined, '', 'sha1=' + 'a'.repeat(40), 'sha256=' + 'a'.repeat(63), 'sha256=' + 'g'.repeat(64), 'a'.repeat(64)]) {
    t.throws(() => parseGithubSignature(bad), { code: 'invalid_signature', status: 401 }, JSON.stringify(bad));
  }
});

t.test('shopify: base64 HMAC-SHA256 of the raw body, as Shopify documents it', async (t) => {
  const secret = 'shpss_0123456789abcdef';
  const header = createHmac('sha256', secret).update(body).digest('base64');
  const check = (b: Buffer, s = secret) => sourceSignatureMatches({ key: textKey(s), prefix: '', candidates: [parseShopifyHmac(header)] }, b);
  t.ok(check(body));
  t.notOk(check(changed(body)), 'a byte changed');
  t.notOk(check(body, 'another'), 'another secret');
  const hex = createHmac('sha256', secret).update(body).digest('hex');
  for (const bad of [undefined, '', hex, header.slice(1), `${header}=`, header.replace(/=$/, '')]) {
    t.throws(() => parseShopifyHmac(bad), { code: 'invalid_signature', status: 401 }, JSON.stringify(bad));
  }
});

t.test('a candidate of another length never matches (and never throws)', async (t) => {
  const key = textKey('k');
  const mac = createHmac('sha256', key).update(body).digest();
  t.notOk(sourceSignatureMatches({ key, prefix: '', candidates: [mac.subarray(0, 31), Buffer.alloc(0)] }, body));
  t.ok(sourceSignatureMatches({ key, prefix: '', candidates: [mac.subarray(0, 31), mac] }, body));
});
