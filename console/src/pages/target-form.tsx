import { useState } from 'preact/hooks';
import { ApiError, put, seg } from '../api';
import type { Target } from '../types';
import { ErrorLine, Field, val } from '../ui';

interface TargetDraft {
  name: string;
  url: string;
  authMode: 'none' | 'bearer' | 'basic' | 'oauth2';
  token: string;
  username: string;
  password: string;
  tokenUrl: string;
  clientId: string;
  clientSecret: string;
  scope: string;
  staticHeaders: Array<{ name: string; value: string }>;
  groupKeyHeader: string;
  timeoutMs: string;
  customRetry: boolean;
  scheduleSeconds: string;
  horizonSeconds: string;
  retryableStatuses: string;
}

function draftOf(x: Target | null): TargetDraft {
  const a = x?.auth ?? { mode: 'none' as const };
  return {
    name: x?.name ?? '',
    url: x?.url ?? '',
    authMode: a.mode,
    token: '',
    username: a.mode === 'basic' ? a.username : '',
    password: '',
    tokenUrl: a.mode === 'oauth2' ? a.tokenUrl : '',
    clientId: a.mode === 'oauth2' ? a.clientId : '',
    clientSecret: '',
    scope: a.mode === 'oauth2' ? a.scope ?? '' : '',
    staticHeaders: Object.entries(x?.staticHeaders ?? {}).map(([name, value]) => ({ name, value })),
    groupKeyHeader: x?.groupKeyHeader ?? '',
    timeoutMs: String(x?.timeoutMs ?? 10_000),
    customRetry: x?.retryPolicy != null,
    scheduleSeconds: (x?.retryPolicy?.scheduleSeconds ?? [0, 5, 30, 120, 600, 1800, 3600]).join(', '),
    horizonSeconds: String(x?.retryPolicy?.horizonSeconds ?? 259_200),
    retryableStatuses: (x?.retryPolicy?.retryableStatuses ?? []).join(', '),
  };
}

const numbers = (s: string) => s.split(/[\s,]+/).filter(Boolean).map(Number);

function bodyOf(d: TargetDraft): Record<string, unknown> {
  const auth = d.authMode === 'bearer' ? { mode: 'bearer', token: d.token }
    : d.authMode === 'basic' ? { mode: 'basic', username: d.username, password: d.password }
    : d.authMode === 'oauth2' ? { mode: 'oauth2', tokenUrl: d.tokenUrl, clientId: d.clientId, clientSecret: d.clientSecret, ...(d.scope ? { scope: d.scope } : {}) }
    : { mode: 'none' };
  const out: Record<string, unknown> = {
    url: d.url.trim(),
    auth,
    staticHeaders: Object.fromEntries(d.staticHeaders.filter((h) => h.name.trim()).map((h) => [h.name.trim(), h.value])),
    timeoutMs: Number(d.timeoutMs),
  };
  if (d.groupKeyHeader.trim()) out.groupKeyHeader = d.groupKeyHeader.trim();
  if (d.customRetry) {
    out.retryPolicy = { scheduleSeconds: numbers(d.scheduleSeconds), horizonSeconds: Number(d.horizonSeconds), retryableStatuses: numbers(d.retryableStatuses) };
  }
  return out;
}

/** Create or edit a target: URL, auth, static headers, group key header, timeout, retry policy. */
export function TargetForm(props: { tenant: string; target: Target | null; canWrite: boolean; onSaved: () => Promise<void> }) {
  const [d, setD] = useState<TargetDraft>(() => draftOf(props.target));
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const set = (patch: Partial<TargetDraft>) => setD({ ...d, ...patch });
  const fe = (f: string) => (error instanceof ApiError ? error.forField(f) : undefined);
  const editing = props.target !== null;
  const secretHint = editing ? 'Write-only: enter it again when you save.' : undefined;

  const save = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await put(`/v1/tenants/${seg(props.tenant)}/targets/${seg(d.name)}`, bodyOf(d));
      await props.onSaved();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  const headerProblems = error instanceof ApiError ? error.details.filter((p) => p.field === 'headers') : [];

  return (
    <form class="card" onSubmit={save} data-testid="target-form">
      <h2>{editing ? <>Target <code>{d.name}</code></> : 'New target'}</h2>
      {props.target?.disabled && <div class="banner" role="alert">Disabled because {props.target.disabledReason ?? 'it failed for too long'}. Saving it re-enables it.</div>}
      <fieldset disabled={!props.canWrite}>
        <div class="grid">
          <Field label="Name" id="t-name" error={fe('name')}>
            <input id="t-name" required value={d.name} readOnly={editing} onInput={(e) => set({ name: val(e) })} />
          </Field>
          <Field label="URL" id="t-url" error={fe('url')}>
            <input id="t-url" required type="url" value={d.url} onInput={(e) => set({ url: val(e) })} placeholder="https://receiver.example/hook" />
          </Field>
          <Field label="Auth" id="t-auth" error={fe('auth')}>
            <select id="t-auth" value={d.authMode} onChange={(e) => set({ authMode: val(e) as TargetDraft['authMode'] })}>
              <option value="none">none</option>
              <option value="bearer">Bearer token</option>
              <option value="basic">Basic</option>
              <option value="oauth2">OAuth 2.0 client credentials</option>
            </select>
          </Field>
          {d.authMode === 'bearer' && (
            <Field label="Token" id="t-token" hint={secretHint}><input id="t-token" type="password" autocomplete="off" value={d.token} onInput={(e) => set({ token: val(e) })} /></Field>
          )}
          {d.authMode === 'basic' && (<>
            <Field label="Username" id="t-username"><input id="t-username" value={d.username} onInput={(e) => set({ username: val(e) })} /></Field>
            <Field label="Password" id="t-password" hint={secretHint}><input id="t-password" type="password" autocomplete="off" value={d.password} onInput={(e) => set({ password: val(e) })} /></Field>
          </>)}
          {d.authMode === 'oauth2' && (<>
            <Field label="Token URL" id="t-tokenUrl" error={fe('auth.tokenUrl')}><input id="t-tokenUrl" value={d.tokenUrl} onInput={(e) => set({ tokenUrl: val(e) })} /></Field>
            <Field label="Client ID" id="t-clientId"><input id="t-clientId" value={d.clientId} onInput={(e) => set({ clientId: val(e) })} /></Field>
            <Field label="Client secret" id="t-clientSecret" hint={secretHint}><input id="t-clientSecret" type="password" autocomplete="off" value={d.clientSecret} onInput={(e) => set({ clientSecret: val(e) })} /></Field>
            <Field label="Scope" id="t-scope"><input id="t-scope" value={d.scope} onInput={(e) => set({ scope: val(e) })} /></Field>
          </>)}
          <Field label="Timeout (ms)" id="t-timeout" error={fe('timeoutMs')}>
            <input id="t-timeout" type="number" min={100} max={600000} value={d.timeoutMs} onInput={(e) => set({ timeoutMs: val(e) })} />
          </Field>
          <Field label="Group key header" id="t-gkh" error={fe('groupKeyHeader')} hint="Opt-in: sends the event's group key under this name.">
            <input id="t-gkh" value={d.groupKeyHeader} onInput={(e) => set({ groupKeyHeader: val(e) })} />
          </Field>
        </div>
        <h3>Static headers</h3>
        {d.staticHeaders.map((h, i) => {
          const upd = (patch: Partial<typeof h>) => set({ staticHeaders: d.staticHeaders.map((x, j) => (j === i ? { ...x, ...patch } : x)) });
          return (
            <div class="grid mapped" key={i}>
              <Field label="Name" id={`sh-${i}-name`} error={fe(`staticHeaders.${h.name.trim()}`)}>
                <input id={`sh-${i}-name`} value={h.name} onInput={(e) => upd({ name: val(e) })} />
              </Field>
              <Field label="Value" id={`sh-${i}-value`}>
                <input id={`sh-${i}-value`} value={h.value} onInput={(e) => upd({ value: val(e) })} />
              </Field>
              <button type="button" onClick={() => set({ staticHeaders: d.staticHeaders.filter((_, j) => j !== i) })}>Remove</button>
            </div>
          );
        })}
        {headerProblems.length > 0 && <ul class="error" role="alert">{headerProblems.map((p) => <li key={p.problem}>{p.problem}</li>)}</ul>}
        <p><button type="button" onClick={() => set({ staticHeaders: [...d.staticHeaders, { name: '', value: '' }] })}>Add static header</button></p>
        <h3>Retry policy</h3>
        <label class="check"><input type="checkbox" checked={d.customRetry} onChange={(e) => set({ customRetry: e.currentTarget.checked })} /> Use a retry policy of its own (otherwise the service's default schedule)</label>
        {d.customRetry && (
          <div class="grid">
            <Field label="Schedule (seconds)" id="t-schedule" error={fe('retryPolicy')} hint="Delays before each retry, comma-separated; the last one repeats.">
              <input id="t-schedule" value={d.scheduleSeconds} onInput={(e) => set({ scheduleSeconds: val(e) })} />
            </Field>
            <Field label="Horizon (seconds)" id="t-horizon"><input id="t-horizon" type="number" min={0} value={d.horizonSeconds} onInput={(e) => set({ horizonSeconds: val(e) })} /></Field>
            <Field label="Other retryable statuses" id="t-statuses" hint="4xx statuses to retry besides 408, 429 and 5xx."><input id="t-statuses" value={d.retryableStatuses} onInput={(e) => set({ retryableStatuses: val(e) })} /></Field>
          </div>
        )}
        <ErrorLine error={error} />
        <div class="row">
          <button class="primary" type="submit" disabled={busy}>Save target</button>
          <a class="button" href={`#/w/${encodeURIComponent(props.tenant)}/targets`}>Cancel</a>
        </div>
      </fieldset>
    </form>
  );
}
