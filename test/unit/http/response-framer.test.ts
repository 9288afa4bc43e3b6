import t from 'tap';
import fc from 'fast-check';
import { ResponseFramer } from '../../../src/http/front/response-framer.js';

/** Runs the framer over `pieces`; returns the bytes passed on and a marker per completed response. */
function frame(pieces: Buffer[], heads: boolean[] = []): string {
  let out = '';
  let n = 0;
  const framer = new ResponseFramer({
    data: (b) => (out += b.toString('latin1')),
    complete: (close) => {
      out += close ? '|END(close)|' : '|END|';
      framer.expectHead(heads[++n] ?? false);
    },
  });
  framer.expectHead(heads[0] ?? false);
  for (const p of pieces) framer.push(p);
  return out;
}
const r = (status: string, headers: string, body = '') => `HTTP/1.1 ${status}\r\n${headers}\r\n${body}`;

t.test('each response ends where its framing says', async (t) => {
  const stream = r('200 OK', 'Content-Length: 5\r\n', 'hello') + r('204 No Content', '') + r('404 Not Found', 'Content-Length: 0\r\n') + r('200 OK', 'Transfer-Encoding: chunked\r\n', '3\r\nabc\r\n0\r\n\r\n') + r('413 Payload Too Large', 'connection: close\r\ncontent-length: 2\r\n', '{}');
  t.equal(
    frame([Buffer.from(stream)]),
    `${r('200 OK', 'Content-Length: 5\r\n', 'hello')}|END|${r('204 No Content', '')}|END|${r('404 Not Found', 'Content-Length: 0\r\n')}|END|${r('200 OK', 'Transfer-Encoding: chunked\r\n', '3\r\nabc\r\n0\r\n\r\n')}|END|${r('413 Payload Too Large', 'connection: close\r\ncontent-length: 2\r\n', '{}')}|END(close)|`,
  );
});

t.test('an interim response does not end the exchange; a HEAD answer loses its body', async (t) => {
  t.equal(frame([Buffer.from(r('100 Continue', '') + r('200 OK', 'Content-Length: 2\r\n', 'ok'))]), `${r('100 Continue', '')}${r('200 OK', 'Content-Length: 2\r\n', 'ok')}|END|`);
  t.equal(frame([Buffer.from(r('200 OK', 'Content-Length: 2\r\n', 'ok') + r('200 OK', 'Content-Length: 2\r\n', 'ok'))], [true, false]), `${r('200 OK', 'Content-Length: 2\r\n')}|END|${r('200 OK', 'Content-Length: 2\r\n', 'ok')}|END|`);
});

t.test('property: any split frames the same', async (t) => {
  const stream = Buffer.from(r('200 OK', 'Content-Length: 5\r\n', 'hello') + r('200 OK', 'Transfer-Encoding: chunked\r\n', 'a\r\n0123456789\r\n0\r\nx: y\r\n\r\n') + r('204 No Content', 'x: 1\r\n'));
  const whole = frame([stream]);
  fc.assert(
    fc.property(fc.array(fc.nat({ max: stream.length }), { maxLength: 10 }), (cuts) => {
      const points = [...new Set(cuts)].sort((a, b) => a - b);
      const pieces: Buffer[] = [];
      let at = 0;
      for (const p of [...points, stream.length]) {
        pieces.push(stream.subarray(at, p));
        at = p;
      }
      return frame(pieces) === whole;
    }),
    { numRuns: 300 },
  );
  t.pass('300 random splits framed as the whole stream');
});
