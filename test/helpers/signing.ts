import { createHash, createHmac, randomBytes } from 'node:crypto';

/**
 * A sender's side of signed-request ingress, written from docs/api.md#authentication alone
 * (nothing imported from src/), so the tests fail if the server's canonical
 * string ever drifts from the contract.
 */
export interface SigningKeyCreds {
  keyId: string;
  secret: string;
}

const unreserved = /[A-Za-z0-9\-._~]/;

function pctEncode(bytes: Buffer): string {
  let out = '';
  for (const b of bytes) {
    const c = String.fromCharCode(b);
    out += unreserved.test(c) ? c : `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

function pctDecode(s: string): Buffer {
  const out: number[] = [];
  for (let i = 0; i < s.length; i++) {
    if (s[i] === '%' && /^[0-9A-Fa-f]{2}$/.test(s.slice(i + 1, i + 3))) {
      out.push(parseInt(s.slice(i + 1, i + 3), 16));
      i += 2;
    } else out.push(...Buffer.from(s[i]!, 'utf8'));
  }
  return Buffer.from(out);
}

/** QUERY per docs/api.md#authentication: decode, RFC 3986 encode, sort by name then value. */
export function contractQuery(raw: string): string {
  if (!raw) return '';
  const pairs = raw.split('&').filter(Boolean).map((p) => {
    const i = p.indexOf('=');
    const [n, v] = i === -1 ? [p, ''] : [p.slice(0, i), p.slice(i + 1)];
    return [pctEncode(pctDecode(n)), pctEncode(pctDecode(v))] as const;
  });
  pairs.sort((a, b) => (a[0] === b[0] ? (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0) : a[0] < b[0] ? -1 : 1));
  return pairs.map(([n, v]) => `${n}=${v}`).join('&');
}

export interface SignOptions {
  method?: string;
  /** Path and query exactly as they go on the wire. */
  pathAndQuery: string;
  body: Buffer | string;
  key: SigningKeyCreds;
  timestamp?: number;
  nonce?: string;
}

/** The five signed-request headers for one request. */
export function signRequest(o: SignOptions): Record<string, string> {
  const body = Buffer.isBuffer(o.body) ? o.body : Buffer.from(o.body);
  const [path, query = ''] = o.pathAndQuery.split(/\?(.*)/s) as [string, string?];
  const timestamp = String(o.timestamp ?? Math.floor(Date.now() / 1000));
  const nonce = o.nonce ?? randomBytes(12).toString('hex');
  const bodySha = createHash('sha256').update(body).digest('hex');
  const canonical = [o.method ?? 'POST', path, contractQuery(query), o.key.keyId, timestamp, nonce, bodySha].join('\n');
  return {
    'x-service-key-id': o.key.keyId,
    'x-service-timestamp': timestamp,
    'x-service-nonce': nonce,
    'x-service-content-sha256': bodySha,
    'x-service-signature': createHmac('sha256', o.key.secret).update(canonical).digest('hex'),
  };
}

/** Resolves early in a wall-clock second, so a request sent now is checked within the same second. */
export async function earlyInSecond(): Promise<void> {
  const ms = Date.now() % 1000;
  if (ms > 300) await new Promise((r) => setTimeout(r, 1000 - ms + 5));
}
