import t from 'tap';
import { crossOriginWrite, fromOwnOrigin, ownOrigin } from '../../../src/auth/same-origin.js';
import type { Exchange } from '../../../src/http/exchange.js';

const ex = (method: string, headers: Record<string, string>): Exchange => ({ method, headers: { host: '127.0.0.1:8080', ...headers } }) as unknown as Exchange;

t.test('own origin: the public URL when set, else http:// and Host', async (t) => {
  t.equal(ownOrigin(ex('GET', {}), ''), 'http://127.0.0.1:8080');
  t.equal(ownOrigin(ex('GET', { host: 'Console.Example:9000' }), ''), 'http://console.example:9000');
  t.equal(ownOrigin(ex('GET', {}), 'https://sg.example.com'), 'https://sg.example.com');
  t.equal(ownOrigin(ex('GET', {}), 'https://sg.example.com:443'), 'https://sg.example.com', 'the default port is dropped, as browsers do in Origin');
});

t.test('writes need Sec-Fetch-Site same-origin, else a matching Origin', async (t) => {
  const cases: Array<[Record<string, string>, boolean]> = [
    [{ 'sec-fetch-site': 'same-origin' }, false],
    [{ 'sec-fetch-site': 'same-site' }, true],
    [{ 'sec-fetch-site': 'cross-site' }, true],
    [{ 'sec-fetch-site': 'none' }, true],
    // Sec-Fetch-Site decides when present, whatever Origin says.
    [{ 'sec-fetch-site': 'cross-site', origin: 'http://127.0.0.1:8080' }, true],
    [{ origin: 'http://127.0.0.1:8080' }, false],
    [{ origin: 'http://127.0.0.1:8081' }, true],
    [{ origin: 'https://127.0.0.1:8080' }, true],
    [{ origin: 'http://localhost:8080' }, true],
    [{ origin: 'null' }, true],
    [{}, true],
  ];
  for (const [headers, refused] of cases) {
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) t.equal(crossOriginWrite(ex(method, headers), ''), refused, `${method} ${JSON.stringify(headers)}`);
  }
  for (const method of ['GET', 'HEAD', 'OPTIONS']) t.equal(crossOriginWrite(ex(method, { 'sec-fetch-site': 'cross-site' }), ''), false, `${method} is not a write`);
});

t.test('lenient (sign-in): only what a browser marks cross-origin is refused', async (t) => {
  t.equal(fromOwnOrigin(ex('POST', {}), '', true), true, 'curl, no headers');
  t.equal(fromOwnOrigin(ex('POST', { origin: 'http://evil.example' }), '', true), false);
  t.equal(fromOwnOrigin(ex('POST', { 'sec-fetch-site': 'cross-site' }), '', true), false);
  t.equal(fromOwnOrigin(ex('POST', { 'sec-fetch-site': 'same-origin' }), '', true), true);
});
