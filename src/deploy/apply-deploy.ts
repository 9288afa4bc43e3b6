import type { DeployFile } from './deploy-file.js';

export type Change = 'created' | 'changed' | 'unchanged' | 'failed';

export interface DeployLine {
  object: string;
  change: Change;
  detail?: string;
}

interface ApiAnswer {
  status: number;
  change: string | null;
  body: unknown;
}

/**
 * Applies a deploy file through the HTTP API, in dependency order: streams
 * (they create their queues), queues, targets, routes, signing keys. Every call
 * is an idempotent PUT or a create-if-missing, so applying the same file twice
 * changes nothing the second time. Objects missing from the file are left alone.
 */
export async function applyDeploy(file: DeployFile, fetchImpl: typeof fetch = fetch): Promise<DeployLine[]> {
  const lines: DeployLine[] = [];
  const call = async (method: string, path: string, body?: unknown): Promise<ApiAnswer> => {
    const res = await fetchImpl(`${file.apiUrl}${path}`, {
      method,
      headers: {
        'x-api-key': file.apiKey,
        'x-license-publicid': file.licensePublicId,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      body: body !== undefined ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      // keep the text
    }
    return { status: res.status, change: res.headers.get('x-streamgate-change'), body: parsed };
  };
  const record = (object: string, answer: ApiAnswer, fallback: Change = 'changed') => {
    if (answer.status >= 400) lines.push({ object, change: 'failed', detail: describeError(object, answer.body) });
    else lines.push({ object, change: (answer.change as Change | null) ?? (answer.status === 201 ? 'created' : fallback) });
  };
  const tenant = `/v1/tenants/${encodeURIComponent(file.tenant)}`;

  for (const stream of file.streams) {
    record(`streams.${String(stream.name)}`, await call('PUT', '/waas/streams', { producerTenantPublicId: file.tenant, ...stream }));
  }
  for (const [name, settings] of Object.entries(file.queues)) {
    record(`queues.${name}`, await call('PUT', `${tenant}/queues/${encodeURIComponent(name)}`, settings));
  }
  for (const [name, settings] of Object.entries(file.targets)) {
    record(`targets.${name}`, await call('PUT', `${tenant}/targets/${encodeURIComponent(name)}`, settings));
  }
  for (const route of file.routes) {
    record(`routes.${route.queue}->${route.target}`,
      await call('PUT', `${tenant}/queues/${encodeURIComponent(route.queue)}/targets/${encodeURIComponent(route.target)}`));
  }
  if (file.signingKeys) {
    const list = await call('GET', `${tenant}/signing-keys`);
    if (list.status >= 400) record('signingKeys', list);
    else {
      const listed = (list.body as { data?: Array<{ algorithm?: string }> })?.data;
      const have = (algorithm: string) => (Array.isArray(listed) ? listed.filter((k) => (k.algorithm ?? 'hmac-sha256') === algorithm).length : 0);
      // signingKeys.minimum counts HMAC keys (what signed-request ingress, `hmac` queues and v1 entries need);
      // signingKeys.ed25519 counts ed25519 keys (the v1a entries of `standard` queues).
      const wanted = [
        { algorithm: 'hmac-sha256', want: file.signingKeys.minimum, body: {} },
        { algorithm: 'ed25519', want: file.signingKeys.ed25519, body: { algorithm: 'ed25519' } },
      ];
      let changed = false;
      for (const { algorithm, want, body } of wanted) {
        for (let i = have(algorithm); i < want; i++) {
          const made = await call('POST', `${tenant}/signing-keys`, body);
          if (made.status >= 400) {
            record('signingKeys', made);
            break;
          }
          changed = true;
          // An HMAC secret exists nowhere else readable by the operator: show it this once.
          // An ed25519 key's public half is what receivers need; its private half is never shown.
          const key = made.body as { keyId?: string; secret?: string; publicKey?: string };
          const detail = key.publicKey ? `public key ${key.publicKey}` : `secret ${key.secret} (shown once)`;
          lines.push({ object: `signingKeys.${key.keyId}`, change: 'created', detail });
        }
      }
      if (!changed && !lines.some((l) => l.object === 'signingKeys' && l.change === 'failed')) lines.push({ object: 'signingKeys', change: 'unchanged' });
    }
  }
  return lines;
}

/** "queues.orders.hopBudget: must be an integer…" from an API error envelope. */
function describeError(object: string, body: unknown): string {
  const error = (body as { error?: { code?: string; message?: string; details?: unknown } })?.error;
  if (!error) return `${object}: unexpected answer ${JSON.stringify(body)}`;
  if (Array.isArray(error.details) && error.details.length > 0) {
    return error.details
      .map((d: { field?: string; problem?: string }) => `${object}.${d.field ?? '?'}: ${d.problem ?? error.message}`)
      .join('; ');
  }
  return `${object}: ${error.code}: ${error.message}`;
}
