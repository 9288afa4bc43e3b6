import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { freshBackends } from '../../helpers/backends.js';
import { bootstrapDatabase, startTestNode } from '../../helpers/nodes.js';
import { httpCall } from '../../helpers/console.js';
import { rawRequest } from '../../helpers/raw-http.js';

// The console's static files at /console/ (issue 14 contract): index.html with
// no-cache and the SPA fallback, content-hashed assets cached for a year, the
// security headers on every answer, and no path that leaves the folder.
const root = mkdtempSync(join(tmpdir(), 'sg-console-'));
t.teardown(() => rmSync(root, { recursive: true, force: true }));
const dir = join(root, 'console');
mkdirSync(join(dir, 'assets'), { recursive: true });
const INDEX = '<!doctype html><html><head><script type="module" src="/console/assets/app-3f9a1c.js"></script></head><body>console fixture</body></html>';
writeFileSync(join(dir, 'index.html'), INDEX);
writeFileSync(join(dir, 'assets', 'app-3f9a1c.js'), 'console.log("app");');
writeFileSync(join(dir, 'assets', 'app-3f9a1c.css'), 'body{}');
writeFileSync(join(dir, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
const SECRET = 'SECRET-OUTSIDE-THE-CONSOLE-FOLDER';
writeFileSync(join(root, 'secret.txt'), SECRET);
symlinkSync(join(root, 'secret.txt'), join(dir, 'assets', 'linked.txt'));

const backends = await freshBackends(t);
await bootstrapDatabase(backends.databaseUrl);
const node = await startTestNode(t, backends, { roles: ['management'], console: { dir } });
const base = `http://127.0.0.1:${node.port}`;
const get = (path: string) => httpCall(base, 'GET', path);
const CSP = "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

const securityHeaders = (t: Test, res: Awaited<ReturnType<typeof get>>, what: string) => {
  t.equal(res.headers['content-security-policy'], CSP, `${what}: CSP`);
  t.equal(res.headers['x-content-type-options'], 'nosniff', `${what}: nosniff`);
  t.equal(res.headers['referrer-policy'], 'no-referrer', `${what}: no referrer`);
};

t.test('index.html at /console/, not cached; /console redirects there', async (t) => {
  const res = await get('/console/');
  t.equal(res.status, 200);
  t.equal(res.text, INDEX);
  t.match(res.headers['content-type'], /^text\/html/);
  t.equal(res.headers['cache-control'], 'no-cache');
  securityHeaders(t, res, 'index');
  const bare = await get('/console');
  t.equal(bare.status, 308);
  t.equal(bare.headers.location, '/console/');
});

t.test('assets: the file, its type, and a year-long immutable cache', async (t) => {
  const js = await get('/console/assets/app-3f9a1c.js');
  t.equal(js.status, 200);
  t.equal(js.text, 'console.log("app");');
  t.match(js.headers['content-type'], /^text\/javascript/);
  t.equal(js.headers['cache-control'], 'public, max-age=31536000, immutable');
  securityHeaders(t, js, 'asset');
  const css = await get('/console/assets/app-3f9a1c.css');
  t.match(css.headers['content-type'], /^text\/css/);
  const icon = await get('/console/favicon.svg');
  t.equal(icon.status, 200);
  t.equal(icon.headers['content-type'], 'image/svg+xml');
  t.equal(icon.headers['cache-control'], 'no-cache', 'a file outside assets/ is not content-hashed');
  const missing = await get('/console/assets/app-000000.js');
  t.equal(missing.status, 404, 'a missing asset is 404, never the app');
  securityHeaders(t, missing, '404');
});

t.test('HEAD: the headers a GET would carry, no body', async (t) => {
  for (const [path, body] of [['/console/', INDEX], ['/console/assets/app-3f9a1c.js', 'console.log("app");'], ['/console/some/page', INDEX]] as const) {
    const res = await rawRequest(node.port, Buffer.from(`HEAD ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n\r\n`));
    t.equal(res.status, 200, `HEAD ${path}`);
    t.match(res.raw, new RegExp(`\r\ncontent-length: ${Buffer.byteLength(body)}\r\n`, 'i'), `${path}: the length of the GET's body`);
    t.match(res.raw, /\r\ncontent-security-policy: /i, `${path}: with the security headers`);
    t.equal(res.body, '', `${path}: and no body`);
  }
  const missing = await rawRequest(node.port, Buffer.from('HEAD /console/assets/app-000000.js HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n\r\n'));
  t.equal(missing.status, 404);
  t.equal(missing.body, '');
});

t.test('SPA fallback: any other path under /console/ is index.html', async (t) => {
  for (const path of ['/console/workspaces/ten_abc/queues', '/console/license', '/console/events/evt_1?status=failed', '/console/a%20b/']) {
    const res = await get(path);
    t.equal(res.status, 200, path);
    t.equal(res.text, INDEX, path);
    t.equal(res.headers['cache-control'], 'no-cache');
  }
});

t.test('an unknown /console/api or /console/auth path is a JSON 404, not the app', async (t) => {
  for (const path of ['/console/api/nope', '/console/auth/nope']) {
    const res = await get(path);
    t.equal(res.status, 404, path);
    t.equal(res.json.error.code, 'not_found');
  }
});

t.test('no path leaves the folder: dot segments (raw and encoded), backslashes, symlinks', async (t) => {
  const paths = [
    '/console/../package.json',
    '/console/../../package.json',
    '/console/../secret.txt',
    '/console/assets/../../secret.txt',
    '/console/%2e%2e/secret.txt',
    '/console/%2E%2E/secret.txt',
    '/console/%2e%2e%2fsecret.txt',
    '/console/assets/..%2f..%2fsecret.txt',
    '/console/..%5csecret.txt',
    '/console/assets/%2e%2e%2f%2e%2e%2fpackage.json',
    '/console/%252e%252e/secret.txt',
    '/console/assets/linked.txt',
    '/console/%00/secret.txt',
    '/console/.%2e/secret.txt',
    '/console//etc/passwd',
  ];
  for (const path of paths) {
    const raw = await rawRequest(node.port, Buffer.from(`GET ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n\r\n`));
    t.notMatch(raw.raw, SECRET, `${path}: not the secret`);
    t.notMatch(raw.raw, /"name": "streamgate"/, `${path}: not package.json`);
    t.notMatch(raw.raw, /root:x:0:0/, `${path}: not /etc/passwd`);
    t.ok(raw.status === null || raw.status === 404 || raw.status === 400 || (raw.status === 200 && raw.body === INDEX), `${path}: refused or the app (${raw.status})`);
  }
});

t.test('without a build: a clear 503 page, and the API still works', async (t) => {
  const b2 = await freshBackends(t);
  await bootstrapDatabase(b2.databaseUrl);
  const empty = mkdtempSync(join(tmpdir(), 'sg-console-empty-'));
  t.teardown(() => rmSync(empty, { recursive: true, force: true }));
  const bare = await startTestNode(t, b2, { roles: ['management'], console: { dir: empty } });
  const res = await httpCall(`http://127.0.0.1:${bare.port}`, 'GET', '/console/');
  t.equal(res.status, 503);
  t.match(res.headers['content-type'], /^text\/html/);
  t.match(res.text, /The console is not built/);
  t.match(res.text, /npm run build/);
  securityHeaders(t, res, 'no build');
  t.equal((await httpCall(`http://127.0.0.1:${bare.port}`, 'GET', '/console/api/config')).status, 200);
});
