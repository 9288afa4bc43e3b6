import { timingSafeEqual } from 'node:crypto';
import { hmacHex, sha256Hex, v1Canonical, v2Canonical, type V1Fields } from './canonical.js';

/**
 * For receivers: checks the signature streamgate puts on a delivery (contract
 * §3). Give it what arrived, unparsed: the request target (`req.url` in
 * node:http: path and query exactly as sent), the headers and the raw body
 * bytes. Several secrets may be given while keys rotate.
 *
 *   import { verifyServiceSignature } from 'streamgate';
 *   const check = verifyServiceSignature({ url: req.url, headers: req.headers, body, secret });
 *   if (!check.ok) return res.writeHead(401).end(check.reason);
 */
export interface VerifyInput {
  /** Request target as received: path plus "?query" (node:http `req.url`), or a full URL. */
  url: string;
  headers: Readonly<Record<string, string | readonly string[] | undefined>>;
  body: Buffer | string;
  /** The signing key's secret, or several (any may match). */
  secret: string | readonly string[];
  /** How far X-Service-Timestamp may be from now, either way (default 300 s). */
  toleranceSeconds?: number;
  /** `v2` (default when the request carries it) also binds the event id and Idempotency-Key. */
  version?: 'v1' | 'v2' | 'best';
  method?: string;
  /** Now, in epoch ms (tests). */
  now?: number;
}

export type VerifyResult =
  | { ok: true; version: 'v1' | 'v2'; keyId: string; eventId: string | null; timestamp: number }
  | { ok: false; reason: string };

export function verifyServiceSignature(input: VerifyInput): VerifyResult {
  const header = (name: string): string | undefined => {
    const v = input.headers[name] ?? input.headers[name.toLowerCase()];
    return Array.isArray(v) ? v[0] : (v as string | undefined);
  };
  const timestamp = header('x-service-timestamp');
  const nonce = header('x-service-nonce');
  const keyId = header('x-service-key-id') ?? '';
  if (!timestamp || !/^\d{1,15}$/.test(timestamp)) return { ok: false, reason: 'missing or malformed X-Service-Timestamp' };
  if (!nonce) return { ok: false, reason: 'missing X-Service-Nonce' };
  const tolerance = input.toleranceSeconds ?? 300;
  const nowSeconds = Math.floor((input.now ?? Date.now()) / 1000);
  if (Math.abs(nowSeconds - Number(timestamp)) > tolerance) return { ok: false, reason: 'timestamp outside the tolerance' };

  const body = typeof input.body === 'string' ? Buffer.from(input.body) : input.body;
  const bodySha256 = sha256Hex(body);
  const claimed = header('x-service-content-sha256');
  if (claimed !== undefined && !equalHex(claimed, bodySha256)) return { ok: false, reason: 'X-Service-Content-SHA256 does not match the body' };

  const target = splitTarget(input.url);
  const fields: V1Fields = { method: input.method ?? 'POST', path: target.path, query: target.query, timestamp, nonce, bodySha256 };
  const secrets = typeof input.secret === 'string' ? [input.secret] : input.secret;
  if (secrets.length === 0) return { ok: false, reason: 'no secret given' };

  const v2 = parseSignatures(header('x-service-signatures')).get('v2');
  const wanted = input.version ?? 'best';
  const eventId = header('x-service-event-id') ?? null;
  if (wanted === 'v2' || (wanted === 'best' && v2)) {
    if (!v2) return { ok: false, reason: 'no v2 signature in X-Service-Signatures' };
    if (eventId === null) return { ok: false, reason: 'missing X-Service-Event-Id' };
    const text = v2Canonical(fields, eventId, header('idempotency-key') ?? null);
    if (secrets.some((s) => v2.some((sig) => equalHex(sig, hmacHex(s, text))))) return { ok: true, version: 'v2', keyId, eventId, timestamp: Number(timestamp) };
    return { ok: false, reason: 'v2 signature does not match' };
  }
  const v1 = header('x-service-signature');
  if (!v1) return { ok: false, reason: 'missing X-Service-Signature' };
  const text = v1Canonical(fields);
  if (secrets.some((s) => equalHex(v1, hmacHex(s, text)))) return { ok: true, version: 'v1', keyId, eventId, timestamp: Number(timestamp) };
  return { ok: false, reason: 'v1 signature does not match' };
}

/** `v1=ab…,v2=cd…` → version → signatures (a version may appear more than once during rotation). */
function parseSignatures(value: string | undefined): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const part of (value ?? '').split(',')) {
    const eq = part.indexOf('=');
    if (eq <= 0) continue;
    const version = part.slice(0, eq).trim();
    out.set(version, [...(out.get(version) ?? []), part.slice(eq + 1).trim()]);
  }
  return out;
}

function splitTarget(url: string): { path: string; query: string } {
  let rest = url;
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(url)) {
    const u = new URL(url);
    rest = u.pathname + u.search;
  }
  const q = rest.indexOf('?');
  return q === -1 ? { path: rest, query: '' } : { path: rest.slice(0, q), query: rest.slice(q + 1) };
}

function equalHex(a: string, b: string): boolean {
  const x = Buffer.from(a.toLowerCase());
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
