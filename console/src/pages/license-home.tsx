import { useEffect, useState } from 'preact/hooks';
import { ApiError, del, get, post, seg } from '../api';
import { href } from '../route';
import { useSession } from '../session';
import type { ApiKey, Items, Workspace } from '../types';
import { ActionButton, ErrorLine, Field, Loading, SecretOnce, Tabs, val, when } from '../ui';
import { NewWorkspaceForm } from './workspace-new';

/** The license's Home page: its workspaces, and the API keys tab. */
export function LicenseHome(props: { tab: 'workspaces' | 'keys' }) {
  const { session } = useSession();
  const lic = session.licensePublicId;
  return (
    <section>
      <h1>{lic ? <>License <code>{lic}</code></> : 'Home'}</h1>
      <Tabs active={props.tab} tabs={[{ id: 'workspaces', label: 'Workspaces', href: href([]) }, { id: 'keys', label: 'API keys', href: href(['keys']) }]} />
      {props.tab === 'keys' ? <ApiKeysTab /> : <WorkspaceList />}
    </section>
  );
}

function WorkspaceList() {
  const { session } = useSession();
  const [list, setList] = useState<Workspace[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    // A key reaches its license's lists; a link or identity-provider session has roles on workspaces, which the session names.
    if (session.kind !== 'key' || !session.licensePublicId) {
      setList(session.workspaces.map((w) => ({ tenantPublicId: w.tenantPublicId, name: w.name })));
      return;
    }
    get<Items<Workspace>>(`/v1/licenses/${seg(session.licensePublicId)}/workspaces`).then((r) => setList(r.items), setError);
  }, [session]);
  if (error) return <ErrorLine error={error} />;
  if (!list) return <Loading />;
  const role = (t: string) => session.workspaces.find((w) => w.tenantPublicId === t)?.role;
  return (
    <>
    {session.licensePublicId && <NewWorkspaceForm licensePublicId={session.licensePublicId} />}
    <table class="list" data-testid="workspaces">
      <thead><tr><th>Workspace</th><th>ID</th><th>Your role</th><th>Created</th></tr></thead>
      <tbody>
        {list.map((w) => (
          <tr key={w.tenantPublicId}>
            <td><a href={href(['w', w.tenantPublicId])}>{w.name || w.tenantPublicId}</a></td>
            <td><code>{w.tenantPublicId}</code></td>
            <td>{role(w.tenantPublicId) ?? '—'}</td>
            <td>{when(w.createdAt)}</td>
          </tr>
        ))}
      </tbody>
    </table>
    </>
  );
}

const PROFILES = [
  { id: 'build', label: 'Build (set up and publish)' },
  { id: 'full', label: 'Full access' },
  { id: 'ingress', label: 'Limit to ingress' },
] as const;

function ApiKeysTab() {
  const { session } = useSession();
  const lic = session.licensePublicId;
  const writable = session.workspaces.filter((w) => w.role !== 'Member');
  const [keys, setKeys] = useState<ApiKey[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [secret, setSecret] = useState<string | null>(null);
  const [form, setForm] = useState({ name: '', profile: 'ingress', tenant: writable[0]?.tenantPublicId ?? '' });
  const [formError, setFormError] = useState<unknown>(null);

  const load = async () => {
    try {
      if (lic && session.kind === 'key') setKeys((await get<Items<ApiKey>>(`/v1/licenses/${seg(lic)}/keys`)).items);
      else {
        // A session without a license (one-time link, identity provider): the keys of each workspace.
        const all = await Promise.all(session.workspaces.map(async (w) => {
          const r = await get<{ data: ApiKey[] }>(`/v1/tenants/${seg(w.tenantPublicId)}/keys`);
          return r.data.filter((k) => !(k as { revokedAt?: string | null }).revokedAt).map((k) => ({ ...k, tenantPublicId: w.tenantPublicId }));
        }));
        setKeys(all.flat());
      }
    } catch (err) {
      setError(err);
    }
  };
  useEffect(() => void load(), [lic]);

  const create = async (e: Event) => {
    e.preventDefault();
    setFormError(null);
    try {
      const body: Record<string, unknown> = { profile: form.profile };
      if (form.name.trim()) body.name = form.name.trim();
      const made = await post<{ keyId: string; key: string }>(`/v1/tenants/${seg(form.tenant)}/keys`, body);
      setSecret(made.key);
      setForm({ ...form, name: '' });
      await load();
    } catch (err) {
      setFormError(err);
    }
  };
  const fe = (f: string) => (formError instanceof ApiError ? formError.forField(f) : undefined);
  const canRevoke = (k: ApiKey) => writable.some((w) => w.tenantPublicId === (k.tenantPublicId ?? writable[0]?.tenantPublicId));

  return (
    <div>
      {secret && <SecretOnce label="Your new API key" value={secret} onDone={() => setSecret(null)} />}
      <form class="card" onSubmit={create} data-testid="create-key">
        <h2>Create an API key</h2>
        <fieldset disabled={writable.length === 0}>
          <div class="grid">
            <Field label="Name" id="key-name" error={fe('name')}>
              <input id="key-name" value={form.name} onInput={(e) => setForm({ ...form, name: val(e) })} />
            </Field>
            <Field label="Profile" id="key-profile" error={fe('profile')}>
              <select id="key-profile" value={form.profile} onChange={(e) => setForm({ ...form, profile: val(e) })}>
                {PROFILES.map((p) => <option key={p.id} value={p.id}>{p.label}</option>)}
              </select>
            </Field>
            <Field label="Workspace" id="key-tenant">
              <select id="key-tenant" value={form.tenant} onChange={(e) => setForm({ ...form, tenant: val(e) })}>
                {writable.map((w) => <option key={w.tenantPublicId} value={w.tenantPublicId}>{w.name} ({w.tenantPublicId})</option>)}
              </select>
            </Field>
          </div>
          <ErrorLine error={formError && !fe('name') && !fe('profile') ? formError : null} />
          <button class="primary" type="submit">Create key</button>
        </fieldset>
      </form>
      {error ? <ErrorLine error={error} /> : !keys ? <Loading /> : (
        <table class="list" data-testid="keys">
          <thead><tr><th>Key ID</th><th>Name</th><th>Profile</th><th>Scopes</th><th>Created</th><th>Last used</th><th /></tr></thead>
          <tbody>
            {keys.length === 0 && <tr><td colSpan={7} class="muted">No keys.</td></tr>}
            {keys.map((k) => (
              <tr key={k.keyId} data-key={k.keyId}>
                <td><code>{k.keyId}</code></td>
                <td data-label="Name">{k.name ?? '—'}</td>
                <td data-label="Profile">{k.profile}</td>
                <td data-label="Scopes">{[k.tenantPublicId ?? 'every workspace', ...((k.scopes ?? k.queueScopes) ?? [])].join(', ')}</td>
                <td data-label="Created">{when(k.createdAt)}</td>
                <td data-label="Last used">{when(k.lastUsedAt)}</td>
                <td>
                  <ActionButton label="Revoke" kind="danger" disabled={!canRevoke(k)} confirm={`Revoke ${k.keyId}? Requests with it are refused at once.`}
                    run={async () => {
                      await del(`/v1/tenants/${seg(k.tenantPublicId ?? writable[0]!.tenantPublicId)}/keys/${seg(k.keyId)}`);
                      await load();
                    }} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}
