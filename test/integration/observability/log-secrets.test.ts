import t from 'tap';
import { freshBackends } from '../../helpers/backends.js';
import { startLoggedNode } from '../../helpers/log-capture.js';
import { bootstrapDatabase, clientFor } from '../../helpers/nodes.js';
import { startReceiver } from '../../helpers/receiver.js';
import { signRequest } from '../../helpers/signing.js';
import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

/**
 * A full run logged at debug with the access log on for every request, then
 * the whole log text searched for every credential that went through the
 * node: API keys (good and wrong), created keys and signing secrets, the
 * signatures of requests and deliveries (real and forged), target passwords,
 * bearer tokens and OAuth client secrets, a payments secret, inbound source
 * secrets and the signatures made with them (real and forged), the key
 * encryption key and the v1/v1a Standard Webhooks signatures of an HMAC and an
 * ed25519 key.
 */

const backends = await freshBackends(t);
const creds = await bootstrapDatabase(backends.databaseUrl);
const KEK = Buffer.from('Key_Encryption_Key_For_Log_Test!').toString('base64');
const { node, log } = await startLoggedNode(t, backends, { log: { level: 'debug', accessLog: { sampleRate: 1 } }, signing: { keyEncryptionKey: KEK } });
const api = clientFor(node.port, creds);
const tenant = creds.tenantPublicId;

t.test('no API key, secret, signature or password appears in the log of a full run', async (t) => {
  const secrets = new Map<string, string>([
    ['bootstrap build key', creds.buildKey],
    ['bootstrap ingress key', creds.ingressKey],
  ]);
  const receiver = await startReceiver(t);
  // Token endpoint refuses (the OAuth target fails), and every first delivery attempt fails: retries are logged.
  const seen = new Set<string>();
  receiver.responder = (req, res) => {
    if (req.path.startsWith('/token')) {
      res.statusCode = 401;
      return void res.end('{"error":"invalid_client"}');
    }
    const id = String(req.headers['x-service-event-id']);
    res.statusCode = seen.has(id) ? 200 : 500;
    seen.add(id);
    res.end();
  };

  // Management: a key and a signing key (secrets shown once), targets with credentials.
  const key = await api.manage('POST', api.tenantPath('/keys'), { profile: 'ingress', name: 'logged' });
  t.equal(key.status, 201);
  secrets.set('created API key', key.body.key);
  const signing = await api.manage('POST', api.tenantPath('/signing-keys'), {});
  t.equal(signing.status, 201);
  secrets.set('signing secret', signing.body.secret);
  secrets.set('key encryption key', KEK);
  secrets.set('key encryption key (hex)', Buffer.from(KEK, 'base64').toString('hex'));
  const ed = await api.manage('POST', api.tenantPath('/signing-keys'), { algorithm: 'ed25519' });
  t.equal(ed.status, 201);
  secrets.set('bearer token', 'tok_bearer_Secret_123456');
  secrets.set('basic password', 'pw_Basic_Secret_654321');
  secrets.set('oauth client secret', 'cs_OAuth_Secret_777777');
  secrets.set('payments secret', 'whsec_Payments_Secret_8888');
  await api.wire('signed', 'bearer-target', `${receiver.url}/bearer`, { authMode: 'signed_request', outboundSigning: 'hmac' }, { auth: { mode: 'bearer', token: secrets.get('bearer token') } });
  await api.wire('plain', 'basic-target', `${receiver.url}/basic`, { outboundSigning: 'hmac' }, { auth: { mode: 'basic', username: 'user', password: secrets.get('basic password') } });
  await api.wire('oauth', 'oauth-target', `${receiver.url}/oauth`, {}, {
    auth: { mode: 'oauth2', tokenUrl: `${receiver.url}/token`, clientId: 'client', clientSecret: secrets.get('oauth client secret') },
  });
  await api.wire('std', 'std-target', `${receiver.url}/std`, { outboundSigning: 'standard' });
  const payments = await api.manage('PUT', api.tenantPath('/queues/payments'), { authMode: 'payments', paymentsSecret: secrets.get('payments secret') });
  t.equal(payments.status < 300, true, 'payments queue saved');

  // Ingress: API keys, signed requests, wrong keys and forged signatures.
  t.equal((await api.postEvent('plain', '{"n":1}')).status, 202);
  t.equal((await api.postEvent('plain', '{"n":2}', { 'x-api-key': key.body.key })).status, 202);
  t.equal((await api.postEvent('oauth', '{"n":3}')).status, 202);
  t.equal((await api.postEvent('std', '{"n":8}')).status, 202);
  const path = `/events/${tenant}/signed`;
  const body = '{"n":4}';
  const good = signRequest({ pathAndQuery: path, body, key: { keyId: signing.body.keyId, secret: signing.body.secret } });
  secrets.set('ingress signature', good['x-service-signature']!);
  t.equal((await api.request('POST', path, { raw: body, headers: { 'content-type': 'application/json', ...good } })).status, 202);
  t.equal((await api.request('POST', path, { raw: body, headers: { 'content-type': 'application/json', ...good } })).status, 401, 'replayed');
  const forged = signRequest({ pathAndQuery: path, body, key: { keyId: signing.body.keyId, secret: 'forged-secret-value' } });
  secrets.set('forged signature', forged['x-service-signature']!);
  t.equal((await api.request('POST', path, { raw: body, headers: { 'content-type': 'application/json', ...forged } })).status, 401, 'forged');
  const wrongKeys = ['qik_Wrong_Ingress_Key_000111', 'qak_Wrong_Build_Key_000222'];
  wrongKeys.forEach((k, i) => secrets.set(`wrong key ${i}`, k));
  t.equal((await api.postEvent('plain', '{"n":5}', { 'x-api-key': wrongKeys[0]! })).status, 401);
  t.equal((await api.request('POST', `/events/${tenant}/plain`, { raw: '{"n":6}', headers: { 'content-type': 'application/json', authorization: `Bearer ${wrongKeys[0]}` } })).status, 401);
  t.equal((await api.request('GET', api.tenantPath('/queues/plain'), { headers: { 'x-api-key': wrongKeys[1]!, 'x-license-publicid': creds.licensePublicId } })).status, 401);
  t.equal((await api.request('GET', api.tenantPath('/queues/plain'), { headers: { authorization: `Bearer ${wrongKeys[1]}` } })).status, 401);
  const stripeLike = `t=${Math.floor(Date.now() / 1000)},v1=${'ab'.repeat(32)}`;
  secrets.set('forged payments signature', 'ab'.repeat(32));
  t.equal((await api.postEvent('payments', '{"n":7}', { 'payments-signature': stripeLike })).status, 401);
  // Inbound sources: their secrets, a real and a forged signature of each kind.
  secrets.set('standard source secret', `whsec_${Buffer.from('Standard_Source_Secret_32_bytes!').toString('base64')}`);
  secrets.set('shopify source secret', 'shpss_Shopify_Source_Secret_5555');
  for (const [queue, authMode, secret] of [['std-src', 'standard_webhooks', 'standard source secret'], ['shop-src', 'shopify', 'shopify source secret']] as const) {
    const saved = await api.manage('PUT', api.tenantPath(`/queues/${queue}`), { authMode, sourceSecret: secrets.get(secret) });
    t.equal(saved.status < 300, true, `${queue} saved`);
  }
  const stdHeaders = (secret: string) => {
    const at = new Date();
    return { 'webhook-id': 'msg_logged', 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': new Webhook(secret).sign('msg_logged', at, '{"n":8}') };
  };
  const realStd = stdHeaders(secrets.get('standard source secret')!);
  const forgedStd = stdHeaders(`whsec_${Buffer.from('Forged_Standard_Secret_32_bytes!').toString('base64')}`);
  secrets.set('standard signature', realStd['webhook-signature'].slice(3));
  secrets.set('forged standard signature', forgedStd['webhook-signature'].slice(3));
  const src = (queue: string, headers: Record<string, string>) => api.request('POST', `/events/${tenant}/${queue}`, { raw: '{"n":8}', headers: { 'content-type': 'application/json', ...headers } });
  t.equal((await src('std-src', realStd)).status, 202);
  t.equal((await src('std-src', forgedStd)).status, 401);
  const shopMac = (secret: string) => createHmac('sha256', secret).update('{"n":8}').digest('base64');
  secrets.set('shopify signature', shopMac(secrets.get('shopify source secret')!));
  secrets.set('forged shopify signature', shopMac('shpss_Forged_Secret_000'));
  t.equal((await src('shop-src', { 'x-shopify-hmac-sha256': secrets.get('shopify signature')!, 'x-shopify-topic': 'orders/create' })).status, 202);
  t.equal((await src('shop-src', { 'x-shopify-hmac-sha256': secrets.get('forged shopify signature')!, 'x-shopify-topic': 'orders/create' })).status, 401);
  // A credential in a query string (where a careless client may put it) is not logged either.
  secrets.set('query key', 'qik_In_Query_String_999');
  await api.request('GET', `${api.tenantPath('/queues/plain')}?api_key=qik_In_Query_String_999`, { headers: { 'x-api-key': creds.buildKey, 'x-license-publicid': creds.licensePublicId } });

  // Deliveries: signed (v1, v2), with Authorization, each after a failed first attempt.
  await receiver.waitFor((r) => r.filter((x) => x.path === '/bearer').length >= 2 && r.filter((x) => x.path === '/basic').length >= 4, 60_000, 'signed deliveries retried and delivered');
  await receiver.waitFor((r) => r.filter((x) => x.path.startsWith('/token')).length >= 1, 60_000, 'the OAuth token request');
  await receiver.waitFor((r) => r.some((x) => x.path === '/std'), 60_000, 'the standard delivery');
  for (const req of receiver.requests.filter((x) => x.path === '/std')) {
    for (const entry of String(req.headers['webhook-signature']).split(' ')) secrets.set(`${entry.split(',')[0]} entry sent to /std`, entry.split(',')[1]!);
  }
  t.ok(secrets.has('v1a entry sent to /std') && secrets.has('v1 entry sent to /std'), 'the standard delivery carried v1 and v1a entries');
  for (const req of receiver.requests) {
    for (const name of ['x-service-signature', 'x-service-signatures', 'authorization'] as const) {
      const value = req.headers[name];
      if (typeof value === 'string') secrets.set(`${name} sent to ${req.path}`, value.replace(/^(Bearer|Basic) /, ''));
    }
  }
  t.ok(receiver.requests.some((r) => r.headers['x-service-signature']), 'deliveries were signed');
  // Let the attempt log, retries and the access log catch up.
  await new Promise((r) => setTimeout(r, 1500));

  const text = log.text;
  t.ok(log.lines.length > 20, `the run was logged (${log.lines.length} lines)`);
  t.ok(log.entries().some((e) => e.msg === 'request' && e.status === 201), 'access lines were written');
  t.ok(log.entries().some((e) => e.msg === 'request refused' && e.status === 401), 'refusals were written');
  t.ok(log.entries().some((e) => typeof e.msg === 'string' && e.msg.startsWith('delivery attempt failed')), 'failed attempts were written');
  for (const [what, value] of secrets) {
    t.ok(value.length >= 16, `${what} is long enough to search for`);
    t.notOk(text.includes(value), `${what} is not in the log`);
  }
  // Basic credentials also travel base64-encoded.
  t.notOk(text.includes(Buffer.from(`user:${secrets.get('basic password')}`).toString('base64')), 'basic credentials (base64) not in the log');
});
