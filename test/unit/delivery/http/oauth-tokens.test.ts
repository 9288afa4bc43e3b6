import http from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { HttpDispatcher } from '../../../../src/delivery/http/http-dispatcher.js';
import { OAuthTokens, TokenError } from '../../../../src/delivery/http/oauth-tokens.js';
import { SsrfGuard } from '../../../../src/delivery/http/ssrf-guard.js';

/** A token endpoint whose answers the test sets; counts requests. */
async function tokenEndpoint(t: { teardown: (fn: () => Promise<void>) => void }) {
  const state = { requests: 0, answer: (n: number): [number, string] => [200, JSON.stringify({ access_token: `t${n}`, token_type: 'bearer', expires_in: 3600 })], delayMs: 0 };
  const srv = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const [status, text] = state.answer(++state.requests);
      setTimeout(() => res.writeHead(status, { 'content-type': 'application/json' }).end(text), state.delayMs);
    });
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => srv.close(() => r())));
  return { state, url: `http://127.0.0.1:${(srv.address() as AddressInfo).port}/token` };
}

const dispatcher = new HttpDispatcher(new SsrfGuard(['127.0.0.0/8']), 8, 65_536);
t.teardown(() => dispatcher.close());
const auth = (tokenUrl: string) => ({ mode: 'oauth2' as const, tokenUrl, clientId: 'c', clientSecret: 's' });

t.test('cached until the margin before expiry; concurrent misses make one request', async (t) => {
  const ep = await tokenEndpoint(t);
  ep.state.delayMs = 30;
  let clock = 1_000_000;
  const tokens = new OAuthTokens(dispatcher, 30, () => clock);
  const [a, b, c] = await Promise.all([tokens.token(auth(ep.url), 1000), tokens.token(auth(ep.url), 1000), tokens.token(auth(ep.url), 1000)]);
  t.same([a, b, c], ['t1', 't1', 't1']);
  t.equal(ep.state.requests, 1);
  clock += (3600 - 31) * 1000;
  t.equal(await tokens.token(auth(ep.url), 1000), 't1', 'still fresh 31 s before expiry');
  clock += 2000;
  t.equal(await tokens.token(auth(ep.url), 1000), 't2', 'refreshed within the 30 s margin');
});

t.test('invalidate drops the token a receiver refused, not a newer one', async (t) => {
  const ep = await tokenEndpoint(t);
  const tokens = new OAuthTokens(dispatcher, 30);
  t.equal(await tokens.token(auth(ep.url), 1000), 't1');
  tokens.invalidate(auth(ep.url), 'stale-token');
  t.equal(await tokens.token(auth(ep.url), 1000), 't1', 'an unrelated token changes nothing');
  tokens.invalidate(auth(ep.url), 't1');
  t.equal(await tokens.token(auth(ep.url), 1000), 't2');
});

t.test('changed credentials get their own token', async (t) => {
  const ep = await tokenEndpoint(t);
  const tokens = new OAuthTokens(dispatcher, 30);
  t.equal(await tokens.token(auth(ep.url), 1000), 't1');
  t.equal(await tokens.token({ ...auth(ep.url), clientSecret: 'rotated' }, 1000), 't2');
});

t.test('bad token answers are TokenErrors (the attempt fails and is retried)', async (t) => {
  const ep = await tokenEndpoint(t);
  const tokens = new OAuthTokens(dispatcher, 30);
  const cases: Array<[number, string, RegExp]> = [
    [401, '{"error":"invalid_client"}', /answered 401/],
    [200, 'not json', /JSON/],
    [200, '{"token_type":"bearer"}', /access_token/],
    [200, '{"access_token":"x","token_type":"mac"}', /bearer/],
  ];
  for (const [status, text, message] of cases) {
    ep.state.answer = () => [status, text];
    const err = await tokens.token(auth(ep.url), 1000).then(() => null, (e: unknown) => e);
    t.ok(err instanceof TokenError, `${status} ${text}: a TokenError`);
    t.match((err as Error).message, message);
  }
  await t.rejects(new OAuthTokens(new HttpDispatcher(new SsrfGuard([]), 1, 1024), 30).token(auth(ep.url), 1000), { message: /ESSRF/ }, 'the token URL is guarded at connect');
});

t.test('expires_in missing: a default lifetime, not forever', async (t) => {
  const ep = await tokenEndpoint(t);
  ep.state.answer = (n) => [200, JSON.stringify({ access_token: `n${n}` })];
  let clock = 0;
  const tokens = new OAuthTokens(dispatcher, 30, () => clock);
  t.equal(await tokens.token(auth(ep.url), 1000), 'n1');
  clock += 10 * 60_000;
  t.equal(await tokens.token(auth(ep.url), 1000), 'n2');
});
