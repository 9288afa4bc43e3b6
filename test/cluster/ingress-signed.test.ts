import t from 'tap';
import { freshBackends } from '../helpers/backends.js';
import { bootstrapDatabase, clientFor, startTestNode } from '../helpers/nodes.js';
import { countRecords, readRecords } from '../helpers/topic.js';
import { earlyInSecond, signRequest, type SigningKeyCreds } from '../helpers/signing.js';

/**
 * Signed-request ingress (docs/api.md#authentication) end to end: the
 * signature is made by test/helpers/signing.ts from the contract's text alone.
 * Two nodes share Redis, so a nonce used on one is refused on the other;
 * one validates inline, the other in the piscina pool.
 */
const backends = await freshBackends(t);
const creds = await bootstrapDatabase(backends.databaseUrl);
const overrides = { roles: ['ingress', 'management'] };
const nodeA = await startTestNode(t, backends, overrides);
// Node B checks signatures in the worker pool, node A inline: both must agree.
const nodeB = await startTestNode(t, backends, { roles: ['ingress'], ingress: { validation: 'pool' } });
const api = clientFor(nodeA.port, creds);
const apiB = clientFor(nodeB.port, creds);
const tenant = creds.tenantPublicId;
const path = `/events/${tenant}/signed`;

t.equal((await api.manage('PUT', api.tenantPath('/queues/signed'), { authMode: 'signed_request' })).status, 201);

async function newSigningKey(): Promise<SigningKeyCreds> {
  const res = await api.manage('POST', api.tenantPath('/signing-keys'));
  if (res.status !== 201) throw new Error(`signing key: ${res.status} ${JSON.stringify(res.body)}`);
  return { keyId: res.body.keyId, secret: res.body.secret };
}

const send = (client: typeof api, pathAndQuery: string, body: Buffer | string, headers: Record<string, string>) =>
  client.request('POST', pathAndQuery, { raw: body, headers: { 'content-type': 'application/json', ...headers } });

t.test('POST signing-keys returns the key id and its secret once, and the queue accepts signed requests', async (t) => {
  const res = await api.manage('POST', api.tenantPath('/signing-keys'));
  t.equal(res.status, 201);
  t.match(res.body, { keyId: /^sig_/, secret: /^whsec_[A-Za-z0-9_-]{43}$/, tenantPublicId: tenant });
  const key = { keyId: res.body.keyId, secret: res.body.secret };
  const body = '{"signed":true}';
  const accepted = await send(api, path, body, signRequest({ pathAndQuery: path, body, key }));
  t.equal(accepted.status, 202);
  t.match(accepted.body.eventId, /^evt_/);
  const refused = await api.request('POST', api.tenantPath('/signing-keys'), { body: {}, headers: { 'x-api-key': creds.ingressKey, 'x-license-publicid': creds.licensePublicId } });
  t.equal(refused.status, 403, 'an ingress key cannot create signing keys');
  t.equal(refused.body.error.code, 'missing_permission');
  const bad = await api.manage('POST', api.tenantPath('/signing-keys'), { name: 'x' });
  t.equal(bad.status, 400, 'unknown fields are named');
  t.equal(bad.body.error.code, 'validation_failed');
});

t.test('clock skew: ±299 s accepted, ±301 s refused with timestamp_out_of_range', async (t) => {
  const key = await newSigningKey();
  for (const skew of [299, -299, 301, -301]) {
    // Signed and checked within one wall-clock second, so the server sees exactly this skew.
    await earlyInSecond();
    const body = JSON.stringify({ skew });
    const res = await send(api, path, body, signRequest({ pathAndQuery: path, body, key, timestamp: Math.floor(Date.now() / 1000) + skew }));
    if (Math.abs(skew) === 299) t.equal(res.status, 202, `${skew} s: accepted`);
    else {
      t.equal(res.status, 401, `${skew} s: refused`);
      t.equal(res.body.error.code, 'timestamp_out_of_range', `${skew} s: code`);
    }
  }
});

t.test('timestamps are parsed strictly: digits only, seconds', async (t) => {
  const key = await newSigningKey();
  const now = Math.floor(Date.now() / 1000);
  // (Whitespace around a value is not part of it in HTTP: "${now} " is "${now}".)
  for (const ts of [`${now}.0`, `+${now}`, `-${now}`, `${now}abc`, `${now}e0`, `0x${now.toString(16)}`, `${now}000`, '']) {
    const body = '{"ts":1}';
    const headers = { ...signRequest({ pathAndQuery: path, body, key }), 'x-service-timestamp': ts };
    const res = await send(api, path, body, headers);
    t.equal(res.status, 401, `${JSON.stringify(ts)} refused`);
    t.match(res.body.error.code, /^(timestamp_out_of_range|invalid_signature)$/, `${JSON.stringify(ts)}: ${res.body.error.code}`);
  }
});

t.test('a nonce is single-use across ingress nodes: replayed_request', async (t) => {
  const key = await newSigningKey();
  const body = '{"once":true}';
  const headers = signRequest({ pathAndQuery: path, body, key });
  t.equal((await send(api, path, body, headers)).status, 202, 'first use on node A');
  const before = await countRecords(backends);
  for (const [name, client] of [['node A', api], ['node B', apiB]] as const) {
    const again = await send(client, path, body, headers);
    t.equal(again.status, 401, `${name}: refused`);
    t.equal(again.body.error.code, 'replayed_request', `${name}: replayed_request`);
  }
  t.equal(await countRecords(backends), before, 'no replay written');
  const fresh = signRequest({ pathAndQuery: path, body, key });
  t.equal((await send(apiB, path, body, fresh)).status, 202, 'the same request with a new nonce is accepted on node B');
});

t.test('flipping one bit of the body is invalid_signature', async (t) => {
  const key = await newSigningKey();
  const body = Buffer.from('{"amount":100,"currency":"EUR"}');
  const headers = signRequest({ pathAndQuery: path, body, key });
  const before = await countRecords(backends);
  for (const bit of [0, 7, 8 * 10 + 3, 8 * body.length - 1]) {
    const flipped = Buffer.from(body);
    flipped[bit >> 3]! ^= 1 << (bit & 7);
    // A fresh nonce each time, so the refusal can only be the body's.
    const res = await send(api, path, flipped, { ...headers, 'x-service-nonce': `${headers['x-service-nonce']}-${bit}` });
    t.equal(res.status, 401, `bit ${bit}`);
    t.equal(res.body.error.code, 'invalid_signature', `bit ${bit}`);
  }
  t.equal(await countRecords(backends), before, 'nothing written');
  t.equal((await send(api, path, body, headers)).status, 202, 'the unmodified request is still accepted (its nonce was never burnt)');
});

t.test('X-Service-Content-SHA256 must be the hash of the body even when the signature covers it', async (t) => {
  const key = await newSigningKey();
  const body = '{"a":1}';
  const other = '{"a":2}';
  // Signed consistently over the other body, then sent with this body.
  const res = await send(api, path, body, signRequest({ pathAndQuery: path, body: other, key }));
  t.equal(res.status, 401);
  t.equal(res.body.error.code, 'invalid_signature');
  t.match(res.body.error.message, /Content-SHA256/);
});

t.test('every signed header is required, and the signature covers method, path, query, key id and nonce', async (t) => {
  const key = await newSigningKey();
  const body = '{"covered":true}';
  const good = signRequest({ pathAndQuery: `${path}?b=2&a=1`, body, key });
  for (const header of Object.keys(good)) {
    const { [header]: _dropped, ...rest } = good;
    const res = await send(api, `${path}?b=2&a=1`, body, rest);
    t.equal(res.body.error.code, 'invalid_signature', `without ${header}`);
  }
  const otherQuery = await send(api, `${path}?b=2&a=2`, body, good);
  t.equal(otherQuery.body.error.code, 'invalid_signature', 'another query');
  const otherNonce = await send(api, `${path}?b=2&a=1`, body, { ...good, 'x-service-nonce': 'another' });
  t.equal(otherNonce.body.error.code, 'invalid_signature', 'another nonce');
  const unknownKey = await send(api, `${path}?b=2&a=1`, body, { ...good, 'x-service-key-id': 'sig_unknown' });
  t.equal(unknownKey.body.error.code, 'invalid_signature', 'an unknown key id');
  const upper = await send(api, `${path}?b=2&a=1`, body, { ...good, 'x-service-signature': good['x-service-signature']!.toUpperCase() });
  t.equal(upper.body.error.code, 'invalid_signature', 'upper-case hex is not the lowercase hex the contract asks for');
  const ok = await send(api, `${path}?b=2&a=1`, body, good);
  t.equal(ok.status, 202, 'the untouched request passes');
});

t.test('QUERY is canonical: any parameter order and RFC 3986 encoding verify the same', async (t) => {
  const key = await newSigningKey();
  const body = '{"q":true}';
  // Sent with lower-case escapes, unsorted, a repeated name, an escaped unreserved character and a '+'.
  const wire = `${path}?z=%e2%82%ac&a=2&a=1&%41b=c+d&empty`;
  const res = await send(api, wire, body, signRequest({ pathAndQuery: wire, body, key }));
  t.equal(res.status, 202, JSON.stringify(res.body));
});

t.test('key rotation: any active signing key verifies', async (t) => {
  const first = await newSigningKey();
  const second = await newSigningKey();
  for (const key of [first, second]) {
    const body = JSON.stringify({ key: key.keyId });
    t.equal((await send(api, path, body, signRequest({ pathAndQuery: path, body, key }))).status, 202, key.keyId);
  }
});

t.test('an API key alone does not open a signed-request queue', async (t) => {
  const res = await send(api, path, '{}', { 'x-api-key': creds.ingressKey });
  t.equal(res.status, 401);
  t.equal(res.body.error.code, 'invalid_signature');
});

t.test('accepted signed events are in the topic with their exact bytes', async (t) => {
  const records = await readRecords(backends);
  const bodies = records.map((r) => r.body.toString());
  t.ok(bodies.includes('{"amount":100,"currency":"EUR"}'));
  t.notOk(bodies.some((b) => b.includes('"a":1')), 'the content-hash mismatch was not written');
});

t.test('the pool engine (node B) verifies and refuses exactly like the inline one (node A)', async (t) => {
  const key = await newSigningKey();
  for (const [name, client] of [['inline', api], ['pool', apiB]] as const) {
    const body = JSON.stringify({ engine: name });
    t.equal((await send(client, path, body, signRequest({ pathAndQuery: path, body, key }))).status, 202, `${name}: a good signature`);
    const tampered = await send(client, path, `${body} `, signRequest({ pathAndQuery: path, body, key }));
    t.equal(tampered.body.error.code, 'invalid_signature', `${name}: a changed body`);
    const wrongKey = await send(client, path, body, signRequest({ pathAndQuery: path, body, key: { ...key, secret: 'x' } }));
    t.equal(wrongKey.body.error.code, 'invalid_signature', `${name}: a wrong secret`);
  }
  const apiKeyQueue = await api.manage('PUT', api.tenantPath('/queues/keyed'), {});
  t.equal(apiKeyQueue.status, 201);
  t.equal((await apiB.postEvent('keyed', '{}')).status, 202, 'pool: an API key hash check');
  t.equal((await apiB.postEvent('keyed', '{}', { 'x-api-key': `${creds.ingressKey.slice(0, -1)}${creds.ingressKey.endsWith('A') ? 'B' : 'A'}` })).body.error.code, 'invalid_api_key', 'pool: a wrong API key');
});
