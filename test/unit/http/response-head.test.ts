import t from 'tap';
import { responseHead } from '../../../src/http/response-head.js';

/**
 * responseHead, every answer's head: framed by Content-Length always (never
 * by close), `connection: close` when the connection ends after it, repeated
 * fields one line each, and no line break from a value (response splitting).
 */

/** The head's lines without the final empty line; throws if it does not end in one. */
function lines(head: string): string[] {
  if (!head.endsWith('\r\n\r\n')) throw new Error(`no empty line at the end: ${JSON.stringify(head)}`);
  return head.slice(0, -4).split('\r\n');
}

t.test('status line, x-request-id, date and content-length, and the empty line', async (t) => {
  const head = lines(responseHead(200, 'req-1', undefined, 5, false));
  t.equal(head[0], 'HTTP/1.1 200 OK');
  t.equal(head[1], 'x-request-id: req-1');
  t.match(head[2], /^date: (Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d\d (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d\d:\d\d:\d\d GMT$/);
  t.equal(head[3], 'content-length: 5');
  t.equal(head.length, 4, 'nothing else');
  t.notOk(head.some((l) => l.startsWith('connection')), 'kept alive: no connection field');
  const date = Date.parse(head[2]!.slice(6));
  t.ok(Math.abs(date - Date.now()) < 2_000, 'the date is now (to the second)');
});

t.test('content-length is always sent, 0 and on errors included', async (t) => {
  t.ok(lines(responseHead(204, 'r', undefined, 0, false)).includes('content-length: 0'), '204');
  t.ok(lines(responseHead(500, 'r', { 'content-type': 'application/json' }, 61, true)).includes('content-length: 61'), '500 that closes');
  t.ok(lines(responseHead(200, 'r', undefined, 1_048_576, false)).includes('content-length: 1048576'));
  t.equal(lines(responseHead(200, 'r', undefined, 0, false)).filter((l) => l.startsWith('content-length')).length, 1, 'once');
});

t.test('connection: close when the connection ends after the answer, last before the empty line', async (t) => {
  const head = lines(responseHead(408, 'r', { 'content-type': 'application/json' }, 10, true));
  t.equal(head[0], 'HTTP/1.1 408 Request Timeout');
  t.equal(head[head.length - 1], 'connection: close');
  t.equal(head.filter((l) => l.startsWith('connection')).length, 1);
});

t.test("the handler's fields: one line per value of an array, in order", async (t) => {
  const head = lines(responseHead(200, 'r', { 'content-type': 'text/plain', 'set-cookie': ['a=1; Path=/', 'b=2; HttpOnly'], 'retry-after': '1' }, 2, false));
  t.same(head.slice(2, 6), ['content-type: text/plain', 'set-cookie: a=1; Path=/', 'set-cookie: b=2; HttpOnly', 'retry-after: 1']);
  const none = lines(responseHead(200, 'r', { 'set-cookie': [] }, 0, false));
  t.notOk(none.some((l) => l.startsWith('set-cookie')), 'an empty array sends no line');
  const empty = lines(responseHead(200, 'r', { 'x-empty': '' }, 0, false));
  t.ok(empty.includes('x-empty: '), 'an empty value is still a field');
});

t.test('a CR or LF in a field name or value throws instead of splitting the response', async (t) => {
  const cases: Array<[string, Record<string, string | string[]>]> = [
    ['LF in a value', { location: '/a\nset-cookie: evil=1' }],
    ['CR in a value', { location: '/a\rx' }],
    ['CRLF in a value', { 'x-a': 'v\r\n\r\n<html>' }],
    ['in one value of an array', { 'set-cookie': ['ok=1', 'bad=1\r\nx: y'] }],
    ['in a name', { 'x-a\r\nset-cookie': 'evil=1' }],
  ];
  for (const [what, extra] of cases) t.throws(() => responseHead(200, 'r', extra, 0, false), /line break/, what);
  // Other bytes are the caller's business: only line breaks end a field.
  t.doesNotThrow(() => responseHead(200, 'r', { 'x-tab': 'a\tb', 'x-utf8': 'é' }, 0, false));
});

t.test('status lines for the statuses the server sends', async (t) => {
  for (const [status, line] of [
    [202, 'HTTP/1.1 202 Accepted'],
    [400, 'HTTP/1.1 400 Bad Request'],
    [413, 'HTTP/1.1 413 Payload Too Large'],
    [503, 'HTTP/1.1 503 Service Unavailable'],
  ] as const) {
    t.equal(lines(responseHead(status, 'r', undefined, 0, false))[0], line);
  }
});

t.test('a frozen set of fields is rendered once; one holding an array is read again each time', async (t) => {
  const constant = Object.freeze({ 'content-type': 'application/json' });
  t.match(responseHead(202, 'r1', constant, 2, false), /\r\ncontent-type: application\/json\r\n/);
  t.match(responseHead(202, 'r2', constant, 2, false), /\r\ncontent-type: application\/json\r\n/, 'the second answer too');
  const cookies = ['a=1'];
  const withArray = Object.freeze({ 'set-cookie': cookies });
  t.match(responseHead(200, 'r3', withArray, 0, false), /set-cookie: a=1\r\n/);
  cookies.push('b=2');
  t.match(responseHead(200, 'r4', withArray, 0, false), /set-cookie: a=1\r\nset-cookie: b=2\r\n/, 'the array as it is now');
  const open = { 'x-one': 'a' } as Record<string, string>;
  responseHead(200, 'r5', open, 0, false);
  open['x-one'] = 'b';
  t.match(responseHead(200, 'r6', open, 0, false), /x-one: b\r\n/, 'an unfrozen set as it is now');
});
