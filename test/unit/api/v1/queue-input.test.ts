import t from 'tap';
import { neverForwardedReason, queueSettingsView, readQueueSettings } from '../../../../src/api/v1/queue-input.js';
import { ServiceError } from '../../../../src/errors.js';

function problems(body: Record<string, unknown>): string[] {
  try {
    readQueueSettings(body);
    return [];
  } catch (err) {
    if (!(err instanceof ServiceError)) throw err;
    return (err.details as Array<{ field: string }>).map((d) => d.field).sort();
  }
}

const DEFAULTS = { hopBudget: 7, dedupWindowSeconds: 600 };

t.test('every docs/api.md#configuration-api ingress setting is accepted and kept', async (t) => {
  const body = {
    authMode: 'payments',
    ingress: 'closed',
    archived: true,
    paymentsSecret: 'whsec_x',
    ipAllowlist: [' 10.0.0.0/8 ', '::1'],
    groupKeyRequired: true,
    eventType: { source: 'body', name: 'type' },
    groupKey: { source: 'query', name: 'g' },
    partitionKey: { source: 'header', name: 'X-P' },
    mappedHeaders: [{ from: { source: 'body', name: 'c' }, as: 'X-C' }],
    outboundSigning: 'hmac',
    paymentsSignatureRecalculation: true,
    hopBudget: 3,
    dedupWindowSeconds: 0,
  };
  t.same(readQueueSettings(body), {
    ...body,
    ipAllowlist: ['10.0.0.0/8', '::1'],
    mappedHeaders: [{ from: { source: 'body', name: 'c' }, as: 'X-C', required: false }],
  });
  for (const mode of ['api_key', 'signed_request', 'payments']) t.same(readQueueSettings({ authMode: mode }), { authMode: mode });
});

t.test('bad values are named, each of them', async (t) => {
  t.same(problems({ authMode: 'none', ingress: 'open', paymentsSecret: '', ipAllowlist: ['10.0.0.0/8', 'x'], hopBudget: 0, dedupWindowSeconds: -1, outboundSigning: 'v3', colour: 1 }), [
    'authMode', 'colour', 'dedupWindowSeconds', 'hopBudget', 'ingress', 'ipAllowlist[1]', 'outboundSigning', 'paymentsSecret',
  ]);
  t.same(problems({ eventType: 'X-Type' }), ['eventType'], 'a source is an object');
  t.same(problems({ groupKey: { source: 'cookie', name: 'g' } }), ['groupKey.source']);
  t.same(problems({ groupKey: { source: 'header', name: 'not a header' } }), ['groupKey.name']);
  t.same(problems({ groupKey: { source: 'body', name: 'g', extra: 1 } }), ['groupKey.extra']);
  t.same(problems({ hopBudget: null, authMode: null }), [], 'null is "not given"');
  t.same(problems({ paymentsSignatureRecalculation: true }), ['paymentsSignatureRecalculation'], 'only payments queues can re-sign');
});

t.test('mapped header rules of docs/api.md#ingress', async (t) => {
  const mapped = (...as: string[]) => ({ mappedHeaders: as.map((name, i) => ({ from: { source: 'body', name: `f${i}` }, as: name })) });
  for (const forbidden of ['X-Service-Anything', 'x-service-event-id', 'Idempotency-Key', 'X-Idempotency-Key', 'X-Delivery-Key', 'Authorization',
    'Proxy-Authorization', 'Cookie', 'Set-Cookie', 'X-Api-Key', 'Host', 'Content-Type', 'Content-Length', 'Connection', 'Transfer-Encoding', 'Expect', 'Upgrade', 'TE']) {
    t.same(problems(mapped(forbidden)), ['mappedHeaders[0].as'], forbidden);
    t.ok(neverForwardedReason(forbidden));
  }
  t.same(problems(mapped('X-A', 'x-a')), ['mappedHeaders[1].as'], 'a collision, case-insensitively');
  t.same(problems(mapped('bad name')), ['mappedHeaders[0].as']);
  t.same(problems({ mappedHeaders: [{ from: { source: 'header', name: 'no spaces' }, as: 'X-A' }] }), ['mappedHeaders[0].from.name']);
  t.same(problems({ mappedHeaders: [{ from: { source: 'body', name: 'a' }, as: 'X-A', required: 'yes' }] }), ['mappedHeaders[0].required']);
  t.same(problems({ mappedHeaders: 'X-A' }), ['mappedHeaders']);
  t.same(problems({ authMode: 'payments', paymentsSignatureRecalculation: true, ...mapped('Payments-Signature') }), ['mappedHeaders[0].as'], 'rule 3');
  t.same(problems({ authMode: 'payments', ...mapped('Payments-Signature') }), [], 'allowed while recalculation is off');
});

t.test('the payments secret is write-only in the view', async (t) => {
  const view = queueSettingsView({ authMode: 'payments', paymentsSecret: 'whsec_s' }, DEFAULTS);
  t.equal(view.paymentsSecretSet, true);
  t.notOk('paymentsSecret' in view);
  t.equal(queueSettingsView({}, DEFAULTS).paymentsSecretSet, false);
  t.equal(queueSettingsView({}, DEFAULTS).hopBudget, 7, 'the configured defaults are shown');
  t.equal(queueSettingsView({}, DEFAULTS).dedupWindowSeconds, 600);
  t.equal(queueSettingsView({ hopBudget: 3 }, DEFAULTS).hopBudget, 3, 'a queue\'s own value wins');
});

t.test('sourceSecret: only with an inbound source mode in the same body; whsec_ + base64 for standard_webhooks; write-only', async (t) => {
  const std = `whsec_${Buffer.from('0123456789abcdef0123456789abcdef').toString('base64')}`;
  t.same(readQueueSettings({ authMode: 'standard_webhooks', sourceSecret: std }), { authMode: 'standard_webhooks', sourceSecret: std });
  t.same(readQueueSettings({ authMode: 'github', sourceSecret: 'any text secret' }), { authMode: 'github', sourceSecret: 'any text secret' });
  t.same(readQueueSettings({ authMode: 'shopify', sourceSecret: 'shpss_x' }), { authMode: 'shopify', sourceSecret: 'shpss_x' });
  for (const mode of ['standard_webhooks', 'github', 'shopify']) t.same(readQueueSettings({ authMode: mode }), { authMode: mode }, `${mode} without a secret (paused)`);
  t.same(problems({ sourceSecret: 'x' }), ['sourceSecret'], 'api_key (the default) has no use for it');
  for (const mode of ['api_key', 'signed_request', 'payments']) t.same(problems({ authMode: mode, sourceSecret: 'x' }), ['sourceSecret'], mode);
  for (const bad of ['not-whsec', 'whsec_', 'whsec_***', 'whsec_A']) t.same(problems({ authMode: 'standard_webhooks', sourceSecret: bad }), ['sourceSecret'], bad);
  t.same(problems({ authMode: 'github', sourceSecret: '' }), ['sourceSecret'], 'empty');
  t.same(problems({ authMode: 'github', sourceSecret: 'a\nb' }), ['sourceSecret'], 'control characters');
  t.same(problems({ authMode: 'github', sourceSecret: 'x'.repeat(501) }), ['sourceSecret'], 'over 500 characters');
  t.same(problems({ authMode: 'github', sourceSecret: null }), [], 'null: not given');

  const view = queueSettingsView({ authMode: 'github', sourceSecret: 'gh-secret' }, DEFAULTS);
  t.equal(view.sourceSecretSet, true);
  t.equal(view.paymentsSecretSet, false);
  t.notOk('sourceSecret' in view);
  t.notOk(JSON.stringify(view).includes('gh-secret'));
  t.equal(queueSettingsView({}, DEFAULTS).sourceSecretSet, false);
});
