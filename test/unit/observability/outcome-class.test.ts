import t from 'tap';
import { outcomeClass } from '../../../src/observability/outcome-class.js';

t.test('a response is classed by its status', async (t) => {
  t.equal(outcomeClass({ status: 200, failureKind: null }), '2xx');
  t.equal(outcomeClass({ status: 204, failureKind: null }), '2xx');
  t.equal(outcomeClass({ status: 301, failureKind: null }), '3xx');
  t.equal(outcomeClass({ status: 404, failureKind: null }), '4xx');
  t.equal(outcomeClass({ status: 410, failureKind: null }), '4xx');
  t.equal(outcomeClass({ status: 429, failureKind: null }), '4xx');
  t.equal(outcomeClass({ status: 500, failureKind: null }), '5xx');
  t.equal(outcomeClass({ status: 503, failureKind: null }), '5xx');
});

t.test('no response: classed by the kind of failure', async (t) => {
  t.equal(outcomeClass({ status: null, failureKind: 'timeout' }), 'timeout');
  t.equal(outcomeClass({ status: null, failureKind: 'refused-address' }), 'ssrf');
  for (const kind of ['network', 'protocol', 'tls', 'configuration', 'shutdown']) {
    t.equal(outcomeClass({ status: null, failureKind: kind }), 'network', kind);
  }
  t.equal(outcomeClass({ status: null, failureKind: null }), 'network', 'unknown failure');
});
