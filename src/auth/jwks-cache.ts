import { createPublicKey, type KeyObject } from 'node:crypto';

/** A verification key from a JWKS document, with what the document says it is for. */
export interface JwkEntry {
  kid: string | null;
  key: KeyObject;
  /** The `alg` the JWK names, if any: a token of another algorithm may not use it. */
  alg: string | null;
}

export type FetchJson = (url: string, signal: AbortSignal) => Promise<unknown>;

const defaultFetch: FetchJson = async (url, signal) => {
  const res = await fetch(url, { signal, headers: { accept: 'application/json' }, redirect: 'error' });
  if (!res.ok) throw new Error(`JWKS answered ${res.status}`);
  return res.json();
};

/**
 * The identity provider's signing keys, fetched from its JWKS URL and kept for
 * `ttlMs`. A token naming a key id we do not hold triggers a refetch (keys
 * rotate), but at most once per `refetchCooldownMs`, so tokens with made-up key
 * ids cannot turn this service into a load generator against the provider.
 */
export class JwksCache {
  private keys: JwkEntry[] = [];
  private fetchedAt = 0;
  private loading: Promise<void> | null = null;

  constructor(
    private readonly url: string,
    private readonly ttlMs: number,
    private readonly refetchCooldownMs = 30_000,
    private readonly fetchJson: FetchJson = defaultFetch,
    private readonly timeoutMs = 5_000,
  ) {}

  /** The key a token names (or the only one, when it names none); null when none fits. */
  async find(kid: string | null): Promise<JwkEntry | null> {
    const age = Date.now() - this.fetchedAt;
    if (this.fetchedAt === 0 || age > this.ttlMs) await this.refresh();
    let found = pick(this.keys, kid);
    if (!found && Date.now() - this.fetchedAt > this.refetchCooldownMs) {
      await this.refresh();
      found = pick(this.keys, kid);
    }
    return found;
  }

  private refresh(): Promise<void> {
    this.loading ??= (async () => {
      try {
        const doc = await this.fetchJson(this.url, AbortSignal.timeout(this.timeoutMs));
        this.keys = parseJwks(doc);
      } finally {
        // A failed fetch also waits for the cooldown: the old keys (if any) stay in use.
        this.fetchedAt = Date.now();
        this.loading = null;
      }
    })();
    return this.loading;
  }
}

function pick(keys: readonly JwkEntry[], kid: string | null): JwkEntry | null {
  if (kid !== null) return keys.find((k) => k.kid === kid) ?? null;
  return keys.length === 1 ? keys[0]! : null;
}

/** Reads the signature keys of a JWKS document; entries that are not usable public keys are skipped. */
export function parseJwks(doc: unknown): JwkEntry[] {
  const list = (doc as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(list)) throw new Error('JWKS document has no keys array');
  const out: JwkEntry[] = [];
  for (const jwk of list) {
    if (typeof jwk !== 'object' || jwk === null) continue;
    const j = jwk as Record<string, unknown>;
    if (j.use !== undefined && j.use !== 'sig') continue;
    if (j.kty !== 'RSA' && j.kty !== 'EC') continue;
    // Private members are never needed and never kept.
    if ('d' in j) continue;
    try {
      const key = createPublicKey({ key: j as never, format: 'jwk' });
      out.push({ kid: typeof j.kid === 'string' ? j.kid : null, key, alg: typeof j.alg === 'string' ? j.alg : null });
    } catch {
      // not a key node:crypto can use: skip it
    }
  }
  return out;
}
