import t from 'tap';
import { canonicalHead, UWS_MAX_FIELDS } from '../../../src/http/front/canonical-head.js';
import type { RequestHead } from '../../../src/http/front/parsed-head.js';
import { RequestParser } from '../../../src/http/front/request-parser.js';
import { PACKED_FIELDS_MARK, unpackFields } from '../../../src/http/guard-marks.js';

/** The head the parser reads from `text` (latin1 bytes), with its body length. */
function parsed(text: string): { head: RequestHead; body: number } {
  let head: RequestHead | null = null;
  let body = 0;
  const parser = new RequestParser(
    { maxHeadBytes: 16_384, maxFields: 100, maxVerbatimFields: 44, bodyLimit: () => 1 << 20 },
    { head: (h) => (head = h), body: (d) => (body += d.length), end: () => {}, error: (err) => { throw err; } },
  );
  parser.push(Buffer.from(text, 'latin1'));
  return { head: head!, body };
}
const canonical = (text: string) => {
  const { head, body } = parsed(text);
  return canonicalHead(head, body).toString('latin1');
};
/** The head as uWS would read it: name → value (lower-cased, repeats joined), packed fields unpacked as the exchange does. */
function asUws(text: string): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const line of text.split('\r\n').slice(1, -2)) {
    const colon = line.indexOf(':');
    const name = line.slice(0, colon).toLowerCase();
    const value = line.slice(colon + 1).trim();
    headers[name] = name in headers ? `${headers[name]}, ${value}` : value;
  }
  unpackFields(headers);
  return headers;
}

t.test('the usual head: its lines go as they came, framing replaced by content-length', async (t) => {
  t.equal(
    canonical('POST /events/t/q HTTP/1.1\r\nHost: x\r\nX-A: 1\r\nTransfer-Encoding: chunked\r\nx-b:2  \r\nx-a: 3\r\nConnection: keep-alive\r\n\r\n5;e=1\r\nhello\r\n6\r\n world\r\n0\r\nt: 1\r\n\r\n'),
    'POST /events/t/q HTTP/1.1\r\nHost: x\r\nX-A: 1\r\nx-b:2  \r\nx-a: 3\r\ncontent-length: 11\r\n\r\n',
    'no TE, no trailers, no connection field; the other lines as they came (uWS trims the whitespace around values as the parser does)',
  );
  t.equal(canonical('HEAD /a HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n'), 'GET /a HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n', 'HEAD goes as GET; close is said');
  t.equal(canonical('GET http://h.example:8080/p?q HTTP/1.1\r\nhost: x\r\n\r\n'), 'GET /p?q HTTP/1.1\r\nhost: h.example:8080\r\n\r\n', 'absolute-form: origin-form, host from it');
  t.equal(canonical('GET /a HTTP/1.0\r\n\r\n'), 'GET /a HTTP/1.1\r\nhost: \r\nconnection: close\r\n\r\n', 'HTTP/1.0 goes as 1.1 with close');
  t.match(canonical('POST /a HTTP/1.1\r\nhost: x\r\ncontent-length: 0\r\n\r\n'), /\r\ncontent-length: 0\r\n\r\n$/, 'an empty framed body keeps its content-length: 0');
});

t.test('a head already in that form goes byte for byte (Content-Length where the client put it); any other does not', async (t) => {
  const tidy = 'POST /events/t/q HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nX-Api-Key: k\r\n\r\n';
  t.equal(canonical(`${tidy}{}`), tidy);
  t.equal(parsed(`${tidy}{}`).head.verbatim, true);
  for (const fine of ['Connection: keep-alive\r\n', 'x-a:1 \r\n', 'x-b:\t2\r\n']) {
    const text = tidy.replace('X-Api-Key', `${fine}X-Api-Key`);
    t.equal(canonical(`${text}{}`), text, `${JSON.stringify(fine)} keeps the head verbatim`);
  }
  for (const odd of ['Connection: close\r\n', 'Connection: keep-alive, Upgrade\r\n', 'x_a: 1\r\n', 'x-streamgate-guard-fields: e\r\n', 'Expect: 100-continue\r\n', 'x-c: caf\u00e9\r\n']) {
    const text = tidy.replace('X-Api-Key', `${odd}X-Api-Key`);
    t.equal(parsed(`${text}{}`).head.verbatim, false, JSON.stringify(odd));
    t.notMatch(canonical(`${text}{}`), /upgrade|expect|x_a|guard-fields: e\r\n|caf/i);
  }
  t.equal(parsed('HEAD / HTTP/1.1\r\nhost: x\r\n\r\n').head.verbatim, false, 'HEAD is sent as GET');
  t.equal(parsed('GET / HTTP/1.2\r\nhost: x\r\n\r\n').head.verbatim, false, 'HTTP/1.2 is sent as 1.1');
});

t.test('what uWS cannot carry is packed and arrives exactly', async (t) => {
  const text = canonical('GET / HTTP/1.1\r\nhost: x\r\nx_group: g1\r\nX.Dot: v\r\nx-utf8: caf\u00c3\u00a9\r\nx-ctl: a\u0001\r\u0000b\r\nx-end: ok\u00ff\r\nx-plain: p\r\nx-plain: q\r\n\r\n');
  t.notMatch(text, /x_group|x\.dot|caf/i, 'nothing uWS would mangle is in place');
  t.match(text, new RegExp(`\\r\\n${PACKED_FIELDS_MARK}: [A-Za-z0-9_.,-]+\\r\\n`));
  const seen = asUws(text);
  t.equal(seen['x_group'], 'g1');
  t.equal(seen['x.dot'], 'v');
  t.equal(seen['x-utf8'], 'café');
  t.equal(seen['x-ctl'], 'a\u0001\r\u0000b');
  t.equal(seen['x-end'], 'ok\ufffd', 'bytes that are not UTF-8 arrive as U+FFFD (refused by the header checks)');
  t.equal(seen['x-plain'], 'p, q');
  t.equal(seen[PACKED_FIELDS_MARK], undefined);
});

t.test('more fields than uWS takes: the rest are packed, never over its field count', async (t) => {
  const fields = Array.from({ length: 97 }, (_, i) => `x-h${i}: v${i}\r\n`).join('');
  const text = canonical(`POST /a HTTP/1.1\r\nhost: x\r\n${fields}content-length: 3\r\nconnection: close\r\n\r\nabc`);
  t.ok(text.split('\r\n').length - 3 <= UWS_MAX_FIELDS, `${text.split('\r\n').length - 3} field lines`);
  const seen = asUws(text);
  for (let i = 0; i < 97; i++) if (seen[`x-h${i}`] !== `v${i}`) t.fail(`x-h${i}`);
  t.pass('all 97 arrive (with host, content-length and connection: 100 fields)');
});
