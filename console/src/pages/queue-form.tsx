import { useState } from 'preact/hooks';
import { ApiError, put, seg } from '../api';
import type { MappedHeader, Queue, SourceRef } from '../types';
import { ErrorLine, Field, checked, val } from '../ui';

type Sourced = { source: '' | SourceRef['source']; name: string };

interface QueueDraft {
  name: string;
  authMode: Queue['authMode'];
  ingress: Queue['ingress'];
  archived: boolean;
  paymentsSecret: string;
  sourceSecret: string;
  ipAllowlist: string;
  groupKeyRequired: boolean;
  eventType: Sourced;
  groupKey: Sourced;
  partitionKey: Sourced;
  mappedHeaders: Array<{ source: SourceRef['source']; name: string; as: string; required: boolean }>;
  outboundSigning: Queue['outboundSigning'];
  paymentsSignatureRecalculation: boolean;
  hopBudget: string;
  dedupWindowSeconds: string;
}

const sourced = (r: SourceRef | undefined): Sourced => (r ? { source: r.source, name: r.name } : { source: '', name: '' });

function draftOf(q: Queue | null): QueueDraft {
  return {
    name: q?.name ?? '',
    authMode: q?.authMode ?? 'api_key',
    ingress: q?.ingress ?? 'accepting',
    archived: q?.archived ?? false,
    paymentsSecret: '',
    sourceSecret: '',
    ipAllowlist: (q?.ipAllowlist ?? []).join('\n'),
    groupKeyRequired: q?.groupKeyRequired ?? false,
    eventType: sourced(q?.eventType),
    groupKey: sourced(q?.groupKey),
    partitionKey: sourced(q?.partitionKey),
    mappedHeaders: (q?.mappedHeaders ?? []).map((m) => ({ source: m.from.source, name: m.from.name, as: m.as, required: m.required })),
    outboundSigning: q?.outboundSigning ?? 'none',
    paymentsSignatureRecalculation: q?.paymentsSignatureRecalculation ?? false,
    hopBudget: String(q?.hopBudget ?? 10),
    dedupWindowSeconds: String(q?.dedupWindowSeconds ?? 86_400),
  };
}

/** Inbound sources: the provider signs with the queue's source secret (docs/api.md#ingress-auth-modes). */
const SOURCE_MODES: ReadonlyArray<Queue['authMode']> = ['standard_webhooks', 'github', 'shopify'];
const SOURCE_SECRET_HINT: Record<string, string> = {
  standard_webhooks: 'The whsec_… secret the sender signs webhook-signature with.',
  github: "The webhook's secret on GitHub (X-Hub-Signature-256).",
  shopify: "The app's client secret on Shopify (X-Shopify-Hmac-Sha256).",
};

/**
 * A queue's stored settings as a PUT body: PUT replaces the whole settings
 * object, so every setting is sent (the payments and source secrets, write-only, cannot be).
 */
export function queueInput(q: Queue): Record<string, unknown> {
  const out: Record<string, unknown> = {
    authMode: q.authMode, ingress: q.ingress, archived: q.archived, ipAllowlist: q.ipAllowlist, groupKeyRequired: q.groupKeyRequired,
    mappedHeaders: q.mappedHeaders, outboundSigning: q.outboundSigning, paymentsSignatureRecalculation: q.paymentsSignatureRecalculation,
    hopBudget: q.hopBudget, dedupWindowSeconds: q.dedupWindowSeconds,
  };
  for (const k of ['eventType', 'groupKey', 'partitionKey'] as const) if (q[k]) out[k] = q[k];
  return out;
}

function bodyOf(d: QueueDraft): Record<string, unknown> {
  const out: Record<string, unknown> = {
    authMode: d.authMode,
    ingress: d.ingress,
    archived: d.archived,
    ipAllowlist: d.ipAllowlist.split(/[\s,]+/).map((s) => s.trim()).filter(Boolean),
    groupKeyRequired: d.groupKeyRequired,
    mappedHeaders: d.mappedHeaders.map((m): MappedHeader => ({ from: { source: m.source, name: m.name.trim() }, as: m.as.trim(), required: m.required })),
    outboundSigning: d.outboundSigning,
    paymentsSignatureRecalculation: d.paymentsSignatureRecalculation,
    hopBudget: Number(d.hopBudget),
    dedupWindowSeconds: Number(d.dedupWindowSeconds),
  };
  if (d.paymentsSecret) out.paymentsSecret = d.paymentsSecret;
  // Only the modes that verify with it take one (the API refuses it elsewhere).
  if (d.sourceSecret && SOURCE_MODES.includes(d.authMode)) out.sourceSecret = d.sourceSecret;
  for (const k of ['eventType', 'groupKey', 'partitionKey'] as const) {
    if (d[k].source) out[k] = { source: d[k].source, name: d[k].name.trim() };
  }
  return out;
}

export function QueueForm(props: { tenant: string; queue: Queue | null; canWrite: boolean; onSaved: () => Promise<void> }) {
  const [d, setD] = useState<QueueDraft>(() => draftOf(props.queue));
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const set = (patch: Partial<QueueDraft>) => setD({ ...d, ...patch });
  const fe = (f: string) => (error instanceof ApiError ? error.forField(f) : undefined);
  const editing = props.queue !== null;

  const save = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/.test(d.name)) throw new ApiError(400, 'validation_failed', 'The name must be 1-100 letters, digits, ".", "_" or "-".', [{ field: 'name', problem: 'must be 1-100 letters, digits, ".", "_" or "-"' }]);
      await put(`/v1/tenants/${seg(props.tenant)}/queues/${seg(d.name)}`, bodyOf(d));
      await props.onSaved();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  const source = (key: 'eventType' | 'groupKey' | 'partitionKey', label: string, def: string) => (
    <fieldset class="inline" key={key}>
      <legend>{label}</legend>
      <Field label="Source" id={`q-${key}-source`} error={fe(key)}>
        <select id={`q-${key}-source`} value={d[key].source} onChange={(e) => set({ [key]: { ...d[key], source: val(e) as Sourced['source'] } })}>
          <option value="">default ({def})</option>
          <option value="header">header</option>
          <option value="query">query parameter</option>
          <option value="body">body field</option>
        </select>
      </Field>
      {d[key].source && (
        <Field label="Name" id={`q-${key}-name`}>
          <input id={`q-${key}-name`} value={d[key].name} onInput={(e) => set({ [key]: { ...d[key], name: val(e) } })} />
        </Field>
      )}
    </fieldset>
  );
  // Problems of one mapped header show at its field; the rest (the list itself, collisions across a route) here.
  const mappedProblems = error instanceof ApiError ? error.details.filter((p) => (p.field.startsWith('mappedHeaders') && !/^mappedHeaders\[\d+\]\./.test(p.field)) || p.field === 'headers') : [];

  return (
    <form class="card" onSubmit={save} data-testid="queue-form">
      <h2>{editing ? <>Queue <code>{d.name}</code></> : 'New queue'}</h2>
      <fieldset disabled={!props.canWrite}>
        <div class="grid">
          <Field label="Name" id="q-name" error={fe('name')}>
            <input id="q-name" required value={d.name} readOnly={editing} onInput={(e) => set({ name: val(e) })} />
          </Field>
          <Field label="Auth mode" id="q-authMode" error={fe('authMode')}>
            <select id="q-authMode" value={d.authMode} onChange={(e) => set({ authMode: val(e) as QueueDraft['authMode'] })}>
              <option value="api_key">API key</option>
              <option value="signed_request">Signed request</option>
              <option value="payments">Payments-Signature</option>
              <option value="standard_webhooks">Standard Webhooks (webhook-signature)</option>
              <option value="github">GitHub (X-Hub-Signature-256)</option>
              <option value="shopify">Shopify (X-Shopify-Hmac-Sha256)</option>
            </select>
          </Field>
          <Field label="Ingress" id="q-ingress" error={fe('ingress')}>
            <select id="q-ingress" value={d.ingress} onChange={(e) => set({ ingress: val(e) as QueueDraft['ingress'] })}>
              <option value="accepting">accepting</option>
              <option value="closed">closed</option>
            </select>
          </Field>
          {d.authMode === 'payments' && (
            <Field label="Payments secret" id="q-paymentsSecret" error={fe('paymentsSecret')}
              hint={props.queue?.paymentsSecretSet ? 'A secret is set. It is write-only: enter it again when you save, or the queue loses it.' : 'The secret incoming Payments-Signature headers are verified with.'}>
              <input id="q-paymentsSecret" type="password" autocomplete="off" value={d.paymentsSecret} onInput={(e) => set({ paymentsSecret: val(e) })} />
            </Field>
          )}
          {SOURCE_MODES.includes(d.authMode) && (
            <Field label="Source secret" id="q-sourceSecret" error={fe('sourceSecret')}
              hint={props.queue?.sourceSecretSet && props.queue.authMode === d.authMode
                ? 'A secret is set. It is write-only: enter it again when you save, or the queue loses it.'
                : SOURCE_SECRET_HINT[d.authMode]}>
              <input id="q-sourceSecret" type="password" autocomplete="off" value={d.sourceSecret} onInput={(e) => set({ sourceSecret: val(e) })} />
            </Field>
          )}
          <Field label="IP allowlist" id="q-ipAllowlist" error={fe('ipAllowlist')} hint="Addresses or CIDRs, one per line; empty lets anyone post.">
            <textarea id="q-ipAllowlist" rows={3} value={d.ipAllowlist} onInput={(e) => set({ ipAllowlist: val(e) })} />
          </Field>
          <Field label="Outbound signing" id="q-outboundSigning" error={fe('outboundSigning')}>
            <select id="q-outboundSigning" value={d.outboundSigning} onChange={(e) => set({ outboundSigning: val(e) as QueueDraft['outboundSigning'] })}>
              <option value="none">none</option>
              <option value="hmac">HMAC (v1 + v2)</option>
              <option value="standard">Standard Webhooks (webhook-signature)</option>
            </select>
          </Field>
          <Field label="Hop budget" id="q-hopBudget" error={fe('hopBudget')}>
            <input id="q-hopBudget" type="number" min={1} max={100} value={d.hopBudget} onInput={(e) => set({ hopBudget: val(e) })} />
          </Field>
          <Field label="Dedup window (seconds)" id="q-dedup" error={fe('dedupWindowSeconds')}>
            <input id="q-dedup" type="number" min={0} value={d.dedupWindowSeconds} onInput={(e) => set({ dedupWindowSeconds: val(e) })} />
          </Field>
        </div>
        <div class="checks">
          <label><input type="checkbox" checked={d.groupKeyRequired} onChange={(e) => set({ groupKeyRequired: checked(e) })} /> Group key required</label>
          <label><input type="checkbox" checked={d.paymentsSignatureRecalculation} onChange={(e) => set({ paymentsSignatureRecalculation: checked(e) })} /> Payments-Signature recalculation</label>
          {fe('paymentsSignatureRecalculation') && <p class="error" role="alert">{fe('paymentsSignatureRecalculation')}</p>}
        </div>
        <h3>Context sources</h3>
        <div class="grid">
          {source('eventType', 'Event type', d.authMode === 'github' ? 'X-GitHub-Event' : d.authMode === 'shopify' ? 'X-Shopify-Topic' : 'X-Service-Event-Type')}
          {source('groupKey', 'Group key', 'X-Service-Group-Key')}
          {source('partitionKey', 'Partition key', 'X-Service-Partition-Key')}
        </div>
        <h3>Mapped headers</h3>
        <p class="muted">Values lifted at accept and sent on delivery under the name you give (unsigned).</p>
        {d.mappedHeaders.map((m, i) => {
          const upd = (patch: Partial<typeof m>) => set({ mappedHeaders: d.mappedHeaders.map((x, j) => (j === i ? { ...x, ...patch } : x)) });
          return (
            <div class="grid mapped" key={i}>
              <Field label="From" id={`mh-${i}-source`}>
                <select id={`mh-${i}-source`} value={m.source} onChange={(e) => upd({ source: val(e) as SourceRef['source'] })}>
                  <option value="header">header</option>
                  <option value="query">query parameter</option>
                  <option value="body">body field</option>
                </select>
              </Field>
              <Field label="Name" id={`mh-${i}-name`} error={fe(`mappedHeaders[${i}].from`)}>
                <input id={`mh-${i}-name`} value={m.name} onInput={(e) => upd({ name: val(e) })} />
              </Field>
              <Field label="Send as" id={`mh-${i}-as`} error={fe(`mappedHeaders[${i}].as`)}>
                <input id={`mh-${i}-as`} value={m.as} onInput={(e) => upd({ as: val(e) })} />
              </Field>
              <label class="check"><input type="checkbox" checked={m.required} onChange={(e) => upd({ required: checked(e) })} /> required</label>
              <button type="button" onClick={() => set({ mappedHeaders: d.mappedHeaders.filter((_, j) => j !== i) })}>Remove</button>
            </div>
          );
        })}
        {mappedProblems.length > 0 && <ul class="error" role="alert">{mappedProblems.map((p) => <li key={p.field + p.problem}>{p.field}: {p.problem}</li>)}</ul>}
        <p><button type="button" onClick={() => set({ mappedHeaders: [...d.mappedHeaders, { source: 'header', name: '', as: '', required: false }] })}>Add mapped header</button></p>
        <ErrorLine error={error} />
        <div class="row">
          <button class="primary" type="submit" disabled={busy}>Save queue</button>
          <a class="button" href={`#/w/${encodeURIComponent(props.tenant)}/queues`}>Cancel</a>
        </div>
      </fieldset>
    </form>
  );
}
