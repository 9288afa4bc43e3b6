import t from 'tap';
import { buildView, DEFAULT_SOURCES } from '../../../src/ingress/queue-directory.js';
import type { IngressQueueRow } from '../../../src/storage/ingress-repo.js';

const row = (settings: object, workspaceSettings: Record<string, unknown> | null = null): IngressQueueRow => ({
  workspaceId: '1', licenseId: '1', workspaceArchived: false, workspaceSettings,
  queueId: '7', queuePublicId: 'que_x', queueName: 'orders', settings,
});
const DEFAULTS = { hopBudget: 10, dedupWindowSeconds: 86_400 };

t.test('defaults: header sources, config hop budget and dedup window, no allowlist', async (t) => {
  const v = buildView('ten_a', row({}), { hopBudget: 4, dedupWindowSeconds: 60 });
  t.same(v.sources, DEFAULT_SOURCES);
  t.equal(v.settings.hopBudget, 4, 'config default');
  t.equal(v.settings.dedupWindowSeconds, 60, 'config default');
  t.equal(v.ownSegment, 'sg:ten_a/orders');
  t.equal(v.readsBody, false);
  t.equal(v.allowlist, null);
  const set = buildView('ten_a', row({ hopBudget: 2, dedupWindowSeconds: 0 }), DEFAULTS);
  t.equal(set.settings.hopBudget, 2, 'the queue setting wins');
  t.equal(set.settings.dedupWindowSeconds, 0);
});

t.test('precedence: queue source, then workspace default, then the header', async (t) => {
  const ws = { ingress: { eventType: { source: 'query', name: 'type' }, groupKey: { source: 'body', name: 'g' }, partitionKey: { source: 'bogus', name: 'p' } } };
  const v = buildView('ten_a', row({ groupKey: { source: 'header', name: 'X-Group' } }, ws), DEFAULTS);
  t.same(v.sources.eventType, { source: 'query', name: 'type' }, 'workspace default');
  t.same(v.sources.groupKey, { source: 'header', name: 'x-group' }, 'queue setting, header name lower-cased');
  t.same(v.sources.partitionKey, DEFAULT_SOURCES.partitionKey, 'an invalid workspace entry is ignored');
  t.equal(v.readsBody, false, 'the body default was overridden by the queue');
  const body = buildView('ten_a', row({ mappedHeaders: [{ from: { source: 'body', name: 'c' }, as: 'X-C', required: false }] }), DEFAULTS);
  t.equal(body.readsBody, true, 'a mapped header from the body means the body must be JSON');
});

t.test('an allowlist is compiled once', async (t) => {
  const v = buildView('ten_a', row({ ipAllowlist: ['10.0.0.0/8'] }), DEFAULTS);
  t.ok(v.allowlist?.allows('10.1.1.1'));
  t.notOk(v.allowlist?.allows('127.0.0.1'));
});

t.test('inbound sources: the provider event-type header below the queue own source, the delivery-id header, the HMAC key', async (t) => {
  const ws = { ingress: { eventType: { source: 'query', name: 'type' } } };
  const github = buildView('ten_a', row({ authMode: 'github', sourceSecret: 'gh-secret' }, ws), DEFAULTS);
  t.same(github.sources.eventType, { source: 'header', name: 'x-github-event' }, 'over the workspace default');
  t.equal(github.deliveryIdHeader, 'x-github-delivery');
  t.same(github.sourceKey, Buffer.from('gh-secret'), "the secret's UTF-8 bytes");
  const own = buildView('ten_a', row({ authMode: 'shopify', sourceSecret: 's', eventType: { source: 'body', name: 'kind' } }), DEFAULTS);
  t.same(own.sources.eventType, { source: 'body', name: 'kind' }, "the queue's own source wins");
  t.equal(own.deliveryIdHeader, 'x-shopify-webhook-id');
  const shopify = buildView('ten_a', row({ authMode: 'shopify' }), DEFAULTS);
  t.same(shopify.sources.eventType, { source: 'header', name: 'x-shopify-topic' });
  t.equal(shopify.sourceKey, null, 'no secret: nothing to verify with');
  const standard = buildView('ten_a', row({ authMode: 'standard_webhooks', sourceSecret: 'whsec_AAEC' }, ws), DEFAULTS);
  t.same(standard.sources.eventType, { source: 'query', name: 'type' }, 'Standard Webhooks names no event-type header');
  t.equal(standard.deliveryIdHeader, 'webhook-id');
  t.same(standard.sourceKey, Buffer.from([0, 1, 2]), 'the base64-decoded whsec_ key');
  const plain = buildView('ten_a', row({ authMode: 'payments', sourceSecret: 'x' }), DEFAULTS);
  t.equal(plain.deliveryIdHeader, null);
  t.equal(plain.sourceKey, null, 'other modes never verify with a source secret');
});
