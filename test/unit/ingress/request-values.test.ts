import t from 'tap';
import { RequestValues } from '../../../src/ingress/request-values.js';

const values = (body: string | Buffer | null, query = '', headers: Record<string, string> = {}) =>
  new RequestValues(headers, query, body === null ? null : Buffer.isBuffer(body) ? body : Buffer.from(body));

t.test('headers: by lower-case name; empty is absent', async (t) => {
  const v = values(null, '', { 'x-a': 'one', 'x-empty': '' });
  t.equal(v.read({ source: 'header', name: 'x-a' }), 'one');
  t.equal(v.read({ source: 'header', name: 'x-empty' }), null);
  t.equal(v.read({ source: 'header', name: 'x-none' }), null);
});

t.test('query: decoded, first value wins, empty is absent', async (t) => {
  const v = values(null, 'a=1&a=2&b=caf%C3%A9&c=&d=x+y&bad=%zz');
  t.equal(v.read({ source: 'query', name: 'a' }), '1');
  t.equal(v.read({ source: 'query', name: 'b' }), 'café');
  t.equal(v.read({ source: 'query', name: 'c' }), null);
  t.equal(v.read({ source: 'query', name: 'd' }), 'x y');
  t.equal(v.read({ source: 'query', name: 'bad' }), '%zz', 'a broken escape is kept, not thrown');
});

t.test('body: top-level scalar fields as text, non-scalars undefined', async (t) => {
  const v = values('{"s":"x","n":12.5,"i":-3,"b":false,"z":null,"o":{"s":"deep"},"a":[1],"e":""}');
  t.equal(v.read({ source: 'body', name: 's' }), 'x');
  t.equal(v.read({ source: 'body', name: 'n' }), '12.5');
  t.equal(v.read({ source: 'body', name: 'i' }), '-3');
  t.equal(v.read({ source: 'body', name: 'b' }), 'false');
  t.equal(v.read({ source: 'body', name: 'z' }), null);
  t.equal(v.read({ source: 'body', name: 'e' }), null);
  t.equal(v.read({ source: 'body', name: 'missing' }), null);
  t.equal(v.read({ source: 'body', name: 'o' }), undefined);
  t.equal(v.read({ source: 'body', name: 'a' }), undefined);
  t.equal(v.read({ source: 'body', name: 'toString' }), null, 'inherited names are not fields');
  t.equal(v.read({ source: 'body', name: '__proto__' }), null);
});

t.test('a body that is not a UTF-8 JSON object is invalid_body', async (t) => {
  for (const body of ['', 'not json', '[1,2]', '"text"', '42', 'null', Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d])]) {
    t.throws(() => values(body).requireJsonBody(), { code: 'invalid_body', status: 400 }, JSON.stringify(body.toString()));
  }
  t.doesNotThrow(() => values('  {"a":1}\n').requireJsonBody());
});
