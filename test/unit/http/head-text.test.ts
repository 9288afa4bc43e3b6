import t from 'tap';
import { fieldName, latin1, utf8 } from '../../../src/http/parser/head-text.js';

const at = (text: string) => {
  const bytes = Buffer.from(`GET / HTTP/1.1\r\n${text}\r\n`, 'latin1');
  return { bytes, start: 16, end: 16 + Buffer.byteLength(text, 'latin1') };
};

t.test('field names come out lower-case, known or not, in any case the client wrote them', async (t) => {
  for (const [sent, expected] of [
    ['Content-Type', 'content-type'],
    ['content-type', 'content-type'],
    ['X-API-KEY', 'x-api-key'],
    ['X-Service-Partition-Key', 'x-service-partition-key'],
    ['X-Custom-Thing', 'x-custom-thing'],
    ['x-custom-thing', 'x-custom-thing'],
    ['ACCEPT', 'accept'],
  ] as const) {
    const { bytes, start, end } = at(sent);
    t.equal(fieldName(bytes, start, end), expected, sent);
  }
});

t.test('a name of a known length that differs in one byte is not taken for the known one', async (t) => {
  // Same length as content-type and x-request-id; '_' and '-' differ only in bit 0x20 at other positions.
  for (const sent of ['content_type', 'X-Request_Id', 'x-api-kez', 'Cookiex']) {
    const { bytes, start, end } = at(sent);
    t.equal(fieldName(bytes, start, end), sent.toLowerCase(), sent);
  }
  const { bytes, start, end } = at('content\rtype');
  t.equal(fieldName(bytes, start, end), 'content\rtype', 'a CR where the dash is (0x0d | 0x20 is the dash)');
});

t.test('values: UTF-8 decoded (invalid bytes become U+FFFD), Latin-1 as is', async (t) => {
  const bytes = Buffer.from([0x61, 0xc3, 0xa9, 0xff, 0x62]);
  t.equal(utf8(bytes, 0, 5), 'aé\ufffdb');
  t.equal(latin1(bytes, 0, 2), 'a\u00c3');
  t.equal(utf8(bytes, 1, 1), '');
});
