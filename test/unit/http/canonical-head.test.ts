import t from 'tap';
import { canonicalHead, UWS_MAX_FIELDS } from '../../../src/http/front/canonical-head.js';
import type { RequestHead } from '../../../src/http/front/request-parser.js';
import { PACKED_FIELDS_MARK, unpackFields } from '../../../src/http/guard-marks.js';

const head = (over: Partial<RequestHead>): RequestHead => ({
  method: 'POST',
  target: '/events/t/q',
  minor: 1,
  host: 'x',
  fields: [],
  chunked: false,
  contentLength: 0,
  framed: false,
  expectContinue: false,
  close: false,
  ...over,
});
const field = (name: string, value: string | number[]) => ({ name, value: Buffer.from(typeof value === 'string' ? Buffer.from(value, 'latin1') : value) });
/** The head as uWS would read it: name → value, packed fields unpacked as the exchange does. */
function asUws(text: string): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const line of text.split('\r\n').slice(1, -2)) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon)] = line.slice(colon + 2);
  }
  unpackFields(headers);
  return headers;
}

t.test('one canonical form: built request line, host, joined repeats, content-length framing', async (t) => {
  const text = canonicalHead(head({ fields: [field('x-a', '1'), field('x-b', '2'), field('x-a', '3')], chunked: true, framed: true }), 11).toString('latin1');
  t.equal(text, 'POST /events/t/q HTTP/1.1\r\nhost: x\r\nx-a: 1, 3\r\nx-b: 2\r\ncontent-length: 11\r\n\r\n');
  t.equal(canonicalHead(head({ method: 'HEAD', target: '/a', close: true }), 0).toString('latin1'), 'GET /a HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n', 'HEAD goes as GET; close is said');
  t.match(canonicalHead(head({ framed: true }), 0).toString('latin1'), /\r\ncontent-length: 0\r\n/, 'an empty framed body keeps its content-length: 0');
});

t.test('what uWS cannot carry is packed and arrives exactly', async (t) => {
  const fields = [field('x_group', 'g1'), field('x.dot', 'v'), field('x-utf8', 'caf\u00c3\u00a9'), field('x-ctl', [0x61, 0x01, 0x0d, 0x00, 0x62]), field('x-end', [0x6f, 0x6b, 0xff]), field('x-plain', 'p')];
  const text = canonicalHead(head({ fields }), 0).toString('latin1');
  t.notMatch(text, /x_group|x\.dot|caf/, 'nothing uWS would mangle is in place');
  t.match(text, new RegExp(`\\r\\n${PACKED_FIELDS_MARK}: [A-Za-z0-9_.,-]+\\r\\n`));
  const seen = asUws(text);
  t.equal(seen['x_group'], 'g1');
  t.equal(seen['x.dot'], 'v');
  t.equal(seen['x-utf8'], 'café');
  t.equal(seen['x-ctl'], 'a\u0001\r\u0000b');
  t.equal(seen['x-end'], 'ok\ufffd', 'bytes that are not UTF-8 arrive as U+FFFD (refused by the header checks)');
  t.equal(seen['x-plain'], 'p');
  t.equal(seen[PACKED_FIELDS_MARK], undefined);
});

t.test('more names than uWS takes: the rest are packed, never over its field count', async (t) => {
  const fields = Array.from({ length: 99 }, (_, i) => field(`x-h${i}`, `v${i}`));
  const text = canonicalHead(head({ fields, framed: true, close: true }), 3).toString('latin1');
  t.ok(text.split('\r\n').length - 3 <= UWS_MAX_FIELDS, `${text.split('\r\n').length - 3} field lines`);
  const seen = asUws(text);
  for (let i = 0; i < 99; i++) if (seen[`x-h${i}`] !== `v${i}`) t.fail(`x-h${i}`);
  t.pass('all 99 arrive');
});
