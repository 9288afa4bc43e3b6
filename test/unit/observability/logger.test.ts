import { Writable } from 'node:stream';
import t from 'tap';
import { createLogger } from '../../../src/observability/logger.js';

function capture() {
  const lines: string[] = [];
  const dest = new Writable({
    write(chunk, _enc, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { lines, log: createLogger('debug', 'test', dest) };
}

t.test('err keeps type, message, stack, code and cause, and nothing else the error carries', async (t) => {
  const { lines, log } = capture();
  const cause = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
  const err = Object.assign(new TypeError('reply failed', { cause }), { code: 'ERR_X', command: { name: 'set', args: ['idem:key', 'qik_secret_value'] }, detail: 'Key (hash)=(abc)' });
  log.warn({ err, eventId: 'evt_1' }, 'something failed');
  const line = JSON.parse(lines[0]!);
  t.equal(line.err.type, 'TypeError');
  t.equal(line.err.message, 'reply failed');
  t.match(line.err.stack, /TypeError: reply failed\n\s+at /);
  t.equal(line.err.code, 'ERR_X');
  t.equal(line.err.cause.code, 'ECONNREFUSED');
  t.equal(line.eventId, 'evt_1');
  t.notMatch(lines[0], /qik_secret_value|Key \(hash\)/);
});

t.test('queue secrets are redacted wherever a queue body or settings object is logged', async (t) => {
  const { lines, log } = capture();
  log.info({ sourceSecret: 'top-src', settings: { sourceSecret: 'nested-src', paymentsSecret: 'nested-pay' }, body: { queue: { sourceSecret: 'deep-src' } } }, 'queue');
  t.notMatch(lines[0], /top-src|nested-src|nested-pay|deep-src/);
  t.match(lines[0], /\[redacted\]/);
});
