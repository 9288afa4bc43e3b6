import t from 'tap';
import fc from 'fast-check';
import { Http1ResponseParser, MAX_RESPONSE_HEAD_BYTES, type ParseStep } from '../../../../src/delivery/http/http1-response-parser.js';

/** Feeds `bytes` in the given pieces; the first step that is not 'more'. */
function parse(bytes: Buffer | string, cuts: number[] = [], max = 65_536, thenEnd = false): ParseStep {
  const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes, 'latin1');
  const p = new Http1ResponseParser(max);
  const points = [...new Set(cuts.filter((c) => c > 0 && c < buf.length))].sort((a, b) => a - b);
  let from = 0;
  for (const to of [...points, buf.length]) {
    const step = p.push(buf.subarray(from, to));
    if (step.kind !== 'more') return step;
    from = to;
  }
  return thenEnd ? p.end() : { kind: 'more' };
}
const everyByte = (s: string) => Array.from({ length: s.length }, (_, i) => i);

const CHUNKED = 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nX-A: 1\r\n\r\n5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nX-Trailer: t\r\n\r\n';

t.test('a Content-Length body, whole or a byte at a time', async (t) => {
  const text = 'HTTP/1.1 201 Created\r\nContent-Length: 5\r\nRetry-After: 3\r\n\r\nhello';
  for (const cuts of [[], everyByte(text)]) {
    const step = parse(text, cuts);
    t.match(step, { kind: 'done', response: { status: 201, truncated: false, reusable: true } });
    if (step.kind === 'done') {
      t.equal(step.response.body.toString(), 'hello');
      t.equal(step.response.headers['retry-after'], '3', 'header names lower-cased');
    }
  }
});

t.test('a chunked body with extensions and trailers, whole or a byte at a time', async (t) => {
  for (const cuts of [[], everyByte(CHUNKED)]) {
    const step = parse(CHUNKED, cuts);
    t.match(step, { kind: 'done', response: { status: 200, reusable: true } });
    if (step.kind === 'done') t.equal(step.response.body.toString(), 'hello world');
  }
});

t.test('any split of a chunked response reads the same (property)', async () => {
  fc.assert(
    fc.property(fc.array(fc.integer({ min: 1, max: CHUNKED.length - 1 }), { maxLength: 12 }), (cuts) => {
      const step = parse(CHUNKED, cuts);
      return step.kind === 'done' && step.response.body.toString() === 'hello world' && step.response.reusable;
    }),
  );
});

t.test('interim 1xx answers are skipped', async (t) => {
  const step = parse('HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 202 Accepted\r\nContent-Length: 2\r\n\r\nok');
  t.match(step, { kind: 'done', response: { status: 202 } });
  if (step.kind === 'done') t.notOk('link' in step.response.headers, 'headers of the final answer only');
});

t.test('when the connection may carry the next request', async (t) => {
  t.match(parse('HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n'), { kind: 'done', response: { reusable: true } });
  t.match(parse('HTTP/1.1 204 No Content\r\n\r\n'), { kind: 'done', response: { status: 204, reusable: true } }, 'no body after 204');
  t.match(parse('HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n'), { kind: 'done', response: { reusable: false } });
  t.match(parse('HTTP/1.1 200 OK\r\nConnection: keep-alive, Close\r\nContent-Length: 0\r\n\r\n'), { kind: 'done', response: { reusable: false } });
  t.match(parse('HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n'), { kind: 'done', response: { reusable: false } }, 'HTTP/1.0');
  t.match(parse('HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nxHTTP/1.1'), { kind: 'done', response: { reusable: false } }, 'bytes after the response');
});

t.test('a body delimited by the connection ending', async (t) => {
  const text = 'HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil the end';
  t.match(parse(text), { kind: 'more' }, 'not done while the connection is open');
  const step = parse(text, [], 65_536, true);
  t.match(step, { kind: 'done', response: { status: 200, reusable: false } });
  if (step.kind === 'done') t.equal(step.response.body.toString(), 'until the end');
  t.match(parse('HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\nzz', [], 65_536, true), { kind: 'done', response: { reusable: false } }, 'a coding other than chunked last');
});

t.test('at most maxBodyBytes are kept; past that the response is done and the connection not reused', async (t) => {
  for (const text of ['HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n0123456789', 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\na\r\n0123456789\r\n0\r\n\r\n']) {
    const step = parse(text, [], 4);
    t.match(step, { kind: 'done', response: { truncated: true, reusable: false } });
    if (step.kind === 'done') t.equal(step.response.body.toString(), '0123');
  }
});

t.test('repeated headers as node:http gives them', async (t) => {
  const step = parse('HTTP/1.1 200 OK\r\nSet-Cookie: a=1\r\nset-cookie: b=2\r\nX-Many: 1\r\nX-Many: 2\r\nContent-Length: 0\r\n\r\n');
  t.ok(step.kind === 'done');
  if (step.kind === 'done') {
    t.same(step.response.headers['set-cookie'], ['a=1', 'b=2']);
    t.equal(step.response.headers['x-many'], '1, 2');
  }
});

t.test('malformed answers are errors, never a guess', async (t) => {
  const cases: Array<[string, string]> = [
    ['HTTP/2 200\r\n\r\n', 'not HTTP/1.x'],
    ['HTTP/1.1 20 OK\r\n\r\n', 'a two-digit status'],
    ['garbage\r\n\r\n', 'no status line'],
    ['HTTP/1.1 200 OK\r\nno colon here\r\n\r\n', 'a header line without a colon'],
    ['HTTP/1.1 200 OK\r\n folded: x\r\n\r\n', 'obs-fold'],
    ['HTTP/1.1 200 OK\r\nContent-Length: 1, 2\r\n\r\n', 'conflicting lengths'],
    ['HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n', 'a negative length'],
    ['HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n', 'a chunk size that is not hex'],
    ['HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabX\r\n', 'chunk data not followed by CRLF'],
  ];
  for (const [text, why] of cases) t.match(parse(text), { kind: 'error' }, why);
  t.match(parse(`HTTP/1.1 200 OK\r\nX: ${'a'.repeat(MAX_RESPONSE_HEAD_BYTES)}`), { kind: 'error' }, 'a head over the limit');
  t.match(parse('HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nabc', [], 65_536, true), { kind: 'error' }, 'the connection ended inside the body');
  t.match(parse('HTTP/1.1 200 OK\r\nContent-Le', [], 65_536, true), { kind: 'error' }, 'the connection ended inside the head');
});
