import t from 'tap';
import { outcomeClass } from '../../../src/observability/outcome-class.js';

t.test('a response is classed by its status', async (t) => {
  t.equal(outcomeClass({ status: 200, errorCode: null }), '2xx');
  t.equal(outcomeClass({ status: 204, errorCode: null }), '2xx');
  t.equal(outcomeClass({ status: 301, errorCode: null }), '3xx');
  t.equal(outcomeClass({ status: 404, errorCode: null }), '4xx');
  t.equal(outcomeClass({ status: 410, errorCode: null }), '4xx');
  t.equal(outcomeClass({ status: 429, errorCode: null }), '4xx');
  t.equal(outcomeClass({ status: 500, errorCode: null }), '5xx');
  t.equal(outcomeClass({ status: 503, errorCode: null }), '5xx');
});

t.test('no response: classed by the dispatcher error code', async (t) => {
  t.equal(outcomeClass({ status: null, errorCode: 'ETIMEDOUT' }), 'timeout');
  t.equal(outcomeClass({ status: null, errorCode: 'ESSRF' }), 'ssrf');
  for (const code of ['ECONNREFUSED', 'ECONNRESET', 'EPROTO', 'ENOTFOUND', 'EREQUEST']) {
    t.equal(outcomeClass({ status: null, errorCode: code }), 'network', code);
  }
  t.equal(outcomeClass({ status: null, errorCode: null }), 'network', 'unknown failure');
});
