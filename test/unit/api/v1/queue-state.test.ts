import t from 'tap';
import { queueState } from '../../../../src/api/v1/queue-state.js';

const open = { workspaceArchived: false, activeSigningKeys: 1 };

t.test('a queue is accepting, closed, paused (with why) or archived', async (t) => {
  t.same(queueState({}, open), { state: 'accepting', pausedReason: null });
  t.same(queueState({ ingress: 'closed' }, open), { state: 'closed', pausedReason: null });
  t.same(queueState({ archived: true }, open), { state: 'archived', pausedReason: null });
  t.same(queueState({}, { ...open, workspaceArchived: true }), { state: 'archived', pausedReason: null }, 'the workspace archived');
  t.match(queueState({ authMode: 'signed_request' }, { ...open, activeSigningKeys: 0 }), { state: 'paused', pausedReason: /no active signing key/ });
  t.same(queueState({ authMode: 'signed_request' }, open).state, 'accepting');
  t.match(queueState({ authMode: 'payments' }, open), { state: 'paused', pausedReason: /no payments secret/ });
  t.same(queueState({ authMode: 'payments', paymentsSecret: 's' }, open).state, 'accepting');
});

t.test('archived wins over paused, paused over closed', async (t) => {
  t.equal(queueState({ archived: true, authMode: 'payments', ingress: 'closed' }, open).state, 'archived');
  t.equal(queueState({ authMode: 'payments', ingress: 'closed' }, open).state, 'paused');
});

t.test('inbound source queues are paused without a source secret', async (t) => {
  for (const authMode of ['standard_webhooks', 'github', 'shopify'] as const) {
    t.match(queueState({ authMode }, open), { state: 'paused', pausedReason: new RegExp(`${authMode} queue has no source secret`) });
    t.equal(queueState({ authMode, paymentsSecret: 's' }, open).state, 'paused', 'a payments secret is not a source secret');
    t.equal(queueState({ authMode, sourceSecret: 's' }, open).state, 'accepting');
  }
});
