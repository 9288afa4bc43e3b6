import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Test } from 'tap';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';

/** What the provider does wrong on purpose in a test. */
export interface Misbehaviour {
  nonce: boolean;
  audience: boolean;
}

/** A small, real OpenID provider on node:http, as the console's sign-in tests use it. */
export interface TestProvider {
  issuer: string;
  clientId: string;
  /** The `sub` the next authorization names. */
  nextSubject: string;
  misbehave: Misbehaviour;
  /** One entry per token request: whether its PKCE verifier matched the challenge. */
  tokenRequests: Array<{ verifierOk: boolean }>;
}

/**
 * Serves discovery, an authorize endpoint that redirects back at once with a
 * code (no login page: the user is `nextSubject`), a token endpoint that
 * checks the PKCE verifier and the redirect URI, and the JWKS of a
 * jose-generated RS256 key. `/mixup/.well-known/openid-configuration` names
 * the main issuer (an issuer mix-up).
 */
export async function startOidcProvider(t: Test, clientId = 'streamgate-console'): Promise<TestProvider> {
  const { publicKey, privateKey } = await generateKeyPair('RS256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
  const codes = new Map<string, { challenge: string; redirectUri: string; nonce: string; sub: string }>();
  const provider: TestProvider = { issuer: '', clientId, nextSubject: 'alice', misbehave: { nonce: false, audience: false }, tokenRequests: [] };
  const discovery = () => {
    const { issuer } = provider;
    return { issuer, authorization_endpoint: `${issuer}/authorize`, token_endpoint: `${issuer}/token`, jwks_uri: `${issuer}/jwks` };
  };
  const server = http.createServer((req, res) => {
    const url = new URL(req.url!, provider.issuer);
    const json = (status: number, value: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(value));
    };
    if (url.pathname === '/.well-known/openid-configuration' || url.pathname === '/mixup/.well-known/openid-configuration') return json(200, discovery());
    if (url.pathname === '/jwks') return json(200, { keys: [jwk] });
    if (url.pathname === '/authorize') {
      const q = url.searchParams;
      if (q.get('client_id') !== clientId || q.get('response_type') !== 'code' || q.get('code_challenge_method') !== 'S256') return json(400, { error: 'invalid_request' });
      const code = `code-${codes.size + 1}-${Date.now()}`;
      codes.set(code, { challenge: q.get('code_challenge')!, redirectUri: q.get('redirect_uri')!, nonce: q.get('nonce')!, sub: provider.nextSubject });
      const back = new URL(q.get('redirect_uri')!);
      back.searchParams.set('code', code);
      back.searchParams.set('state', q.get('state')!);
      res.writeHead(302, { location: back.toString() });
      return res.end();
    }
    if (url.pathname === '/token' && req.method === 'POST') {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        void (async () => {
          const form = new URLSearchParams(body);
          const grant = codes.get(form.get('code') ?? '');
          codes.delete(form.get('code') ?? '');
          const verifierOk = !!grant && createHash('sha256').update(form.get('code_verifier') ?? '').digest('base64url') === grant.challenge;
          provider.tokenRequests.push({ verifierOk });
          if (!grant || !verifierOk || form.get('redirect_uri') !== grant.redirectUri || form.get('grant_type') !== 'authorization_code') {
            return json(400, { error: 'invalid_grant' });
          }
          const idToken = await new SignJWT({ nonce: provider.misbehave.nonce ? 'another-nonce' : grant.nonce, email: `${grant.sub}@example.test` })
            .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
            .setIssuer(provider.issuer)
            .setAudience(provider.misbehave.audience ? 'another-client' : clientId)
            .setSubject(grant.sub)
            .setIssuedAt()
            .setExpirationTime('5m')
            .sign(privateKey);
          json(200, { access_token: 'at', token_type: 'Bearer', id_token: idToken, expires_in: 300 });
        })();
      });
      return;
    }
    json(404, { error: 'not_found' });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => {
    server.closeAllConnections();
    server.close(() => r());
  }));
  provider.issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return provider;
}

/** The node settings that make its console trust `provider` (auth.console). */
export function consoleAuthFor(provider: TestProvider, issuer = provider.issuer) {
  return { console: { issuer, audience: provider.clientId, jwksUrl: `${provider.issuer}/jwks` } };
}
