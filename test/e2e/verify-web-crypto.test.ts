import { createServer } from 'node:http';
import { existsSync, readFileSync } from 'node:fs';
import { generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { Webhook } from 'standardwebhooks';
import { paymentsSignature, signatureHeaders } from '../../src/delivery/signing/signing.js';
import { startBrowser } from '../helpers/browser.js';

declare const window: any; // in page.evaluate callbacks (no DOM lib here)

// streamgate/verify in a browser (Debian's Chromium, headless): the built
// dist/verify/*.js is served as ES modules and imported by a page, where there
// is no Buffer, no process and no node:crypto, only Web Crypto. Signatures made
// in Node (the standardwebhooks library, node:crypto Ed25519, the service's own
// signing code) verify there, and a tampered body is refused.

const dist = fileURLToPath(new URL('../../dist/verify/', import.meta.url));

t.test('streamgate/verify resolves to the built module (package.json exports)', async (t) => {
  const m = await import('streamgate/verify');
  t.same(Object.keys(m).sort(), ['verifyPaymentsSignature', 'verifyServiceSignature', 'verifyStandard']);
});

t.test('the verifier runs on Web Crypto in Chromium', async (t) => {
  if (!existsSync(`${dist}index.js`)) throw new Error(`${dist}index.js is missing: run npm run build`);
  const served: string[] = [];
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    served.push(path);
    if (path === '/') return res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>verify</title><p>verify</p>');
    if (path === '/favicon.ico') return res.writeHead(204).end();
    const m = /^\/verify\/([a-z-]+\.js(?:\.map)?)$/.exec(path);
    if (!m || !existsSync(`${dist}${m[1]}`)) return res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'text/javascript' }).end(readFileSync(`${dist}${m[1]}`));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const browser = await startBrowser(t);
  const page = await browser.newPage();
  const errors: string[] = [];
  page.on('pageerror', (err) => errors.push(String(err)));
  page.on('console', (msg) => { if (msg.type() === 'error') errors.push(msg.text()); });
  await page.goto(`${base}/`);
  await page.addScriptTag({ type: 'module', content: "import * as verify from '/verify/index.js'; window.verify = verify;" });
  await page.waitForFunction(() => window.verify !== undefined, { timeout: 10_000 });
  t.same(await page.evaluate(() => [typeof window.process, typeof window.Buffer, typeof window.require, window.isSecureContext]), ['undefined', 'undefined', 'undefined', true], 'a page: no Node API, a secure context (Web Crypto)');

  /** Runs one verifier in the page; the body goes over as bytes and is rebuilt as a Uint8Array there. */
  const inPage = (fn: string, input: Record<string, unknown>, body: Buffer, asHeaders = false) =>
    page.evaluate(async (fn: string, input: any, bytes: number[], asHeaders: boolean) => {
      const args = { ...input, body: new Uint8Array(bytes) };
      if (asHeaders) args.headers = new window.Headers(input.headers);
      return window.verify[fn](args);
    }, fn, input, [...body], asHeaders);

  const now = Date.now();
  const ts = Math.floor(now / 1000);
  const body = Buffer.from('{"type":"order.created","data":{"note":"caf\u00e9"}}');

  // Standard Webhooks v1, signed by the standardwebhooks library.
  const secret = `whsec_${randomBytes(32).toString('base64')}`;
  const v1 = new Webhook(secret).sign('msg_browser', new Date(ts * 1000), body);
  const standard = { 'webhook-id': 'msg_browser', 'webhook-timestamp': String(ts), 'webhook-signature': v1 };
  t.match(await inPage('verifyStandard', { headers: standard, secrets: [secret], now }, body), { ok: true, id: 'msg_browser', version: 'v1' }, 'v1 (HMAC) verifies in the browser');
  t.match(await inPage('verifyStandard', { headers: standard, secrets: [secret], now }, body, true), { ok: true }, 'with a Headers instance too');

  // v1a: Ed25519 signed with node:crypto, the raw public key as whpk_.
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const whpk = `whpk_${Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url').toString('base64')}`;
  const v1a = `v1a,${sign(null, Buffer.concat([Buffer.from(`msg_browser.${ts}.`), body]), privateKey).toString('base64')}`;
  const signed = { ...standard, 'webhook-signature': v1a };
  t.match(await inPage('verifyStandard', { headers: signed, publicKeys: [whpk], now }, body), { ok: true, version: 'v1a' }, 'v1a (Ed25519) verifies in the browser');

  // Refusals.
  const tampered = Buffer.from(body.toString().replace('caf', 'cof'));
  t.match(await inPage('verifyStandard', { headers: { ...standard, 'webhook-signature': `${v1} ${v1a}` }, secrets: [secret], publicKeys: [whpk], now }, tampered), { ok: false, reason: 'no_matching_signature' }, 'a tampered body is refused');
  t.match(await inPage('verifyStandard', { headers: standard, secrets: [secret], now: now + 600_000 }, body), { ok: false, reason: 'timestamp_too_old' }, 'an old timestamp is refused');

  // The service's own X-Service v2 and Payments-Signature (SHA-256 digest and the canonical query in the page).
  const key = { keyId: 'sig_b', secret: `whsec_${randomBytes(32).toString('base64url')}` };
  const service = { ...signatureHeaders(key, { url: new URL('https://r.example/in/p%20q?z=1&a=%7e'), body, eventId: 'evt_b', idempotencyKey: null }, now), 'x-service-event-id': 'evt_b' };
  t.match(await inPage('verifyServiceSignature', { url: '/in/p%20q?z=1&a=%7e', headers: service, secret: key.secret, now }, body), { ok: true, version: 'v2', eventId: 'evt_b' }, 'X-Service v2 verifies in the browser');
  t.match(await inPage('verifyServiceSignature', { url: '/in/p%20q?z=1&a=%7e', headers: service, secret: key.secret, now }, tampered), { ok: false, reason: 'body_hash_mismatch' }, 'and refuses a tampered body');
  t.match(await inPage('verifyPaymentsSignature', { header: paymentsSignature('pay_secret', body, now), secret: 'pay_secret', now }, body), { ok: true }, 'Payments-Signature verifies in the browser');

  t.same(errors, [], `no error in the page (served: ${served.join(' ')})`);
  t.ok(served.includes('/verify/index.js') && served.includes('/verify/standard.js'), 'the modules came from dist/verify');
});
