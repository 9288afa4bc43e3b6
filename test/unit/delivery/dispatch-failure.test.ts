import t from 'tap';
import { dispatchFailure } from '../../../src/delivery/dispatch-failure.js';
import { classify } from '../../../src/delivery/outcome.js';
import { outcomeClass } from '../../../src/observability/outcome-class.js';

const error = (code: string, text = 'x') => ({ kind: 'error' as const, code, error: text, durationMs: 3 });

t.test('every code the dispatchers produce has its kind', async (t) => {
  t.same(dispatchFailure('ETIMEDOUT'), { kind: 'timeout', transient: true });
  for (const code of ['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH']) t.equal(dispatchFailure(code).kind, 'network', code);
  t.equal(dispatchFailure('EPROTO').kind, 'protocol');
  t.same(dispatchFailure('ESSRF'), { kind: 'refused-address', transient: false });
  t.same(dispatchFailure('ENOKEY'), { kind: 'configuration', transient: false });
  t.same(dispatchFailure('ETOKEN'), { kind: 'configuration', transient: false });
  t.equal(dispatchFailure('ECONFIG').kind, 'network', 'signing settings unreadable: the database is away, not a setting to fix');
  t.equal(dispatchFailure('ECLOSED').kind, 'shutdown');
  for (const code of ['CERT_HAS_EXPIRED', 'SELF_SIGNED_CERT_IN_CHAIN', 'ERR_TLS_CERT_ALTNAME_INVALID', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE']) {
    t.same(dispatchFailure(code), { kind: 'tls', transient: false }, code);
  }
  t.same(dispatchFailure('SOMETHING_NEW'), { kind: 'network', transient: true }, 'an unknown code is a network failure');
});

t.test('an attempt without an answer is retried on the schedule, with its kind; a configuration failure says so', async (t) => {
  t.match(classify(error('ECONNREFUSED', 'connect ECONNREFUSED')), { kind: 'retry', failure: 'network', reason: 'ECONNREFUSED: connect ECONNREFUSED', retryAfterMs: null });
  t.match(classify(error('ENOKEY', 'the queue signs deliveries but its workspace has no active signing key')), {
    kind: 'retry',
    failure: 'configuration',
    reason: /^configuration: ENOKEY: the queue signs deliveries/,
  });
  t.equal(classify({ kind: 'response', status: 503, headers: {}, body: Buffer.alloc(0), durationMs: 1 }).kind, 'retry');
  t.notOk('failure' in classify({ kind: 'response', status: 503, headers: {}, body: Buffer.alloc(0), durationMs: 1 }), 'an answer has no failure kind');
});

t.test('the metric classes come from the same table', async (t) => {
  const classOf = (code: string) => outcomeClass({ status: null, failureKind: dispatchFailure(code).kind });
  t.equal(classOf('ESSRF'), 'ssrf');
  t.equal(classOf('ETIMEDOUT'), 'timeout');
  t.equal(classOf('ENOKEY'), 'network');
  t.equal(outcomeClass({ status: 204, failureKind: null }), '2xx');
});
