import { useEffect, useState } from 'preact/hooks';
import { ApiError, del, get, post, put, seg } from '../api';
import { href } from '../route';
import { useCanWrite } from '../session';
import type { Data } from '../types';
import { ActionButton, Badge, ErrorLine, Field, Loading, SecretOnce, Tabs, checked, val, when } from '../ui';
import { MetricsChart } from './metrics-chart';

interface Stream {
  publicId: string;
  key: string;
  name: string;
  description: string | null;
  eventTypes: string[];
  payloadSchema: string | null;
  status: string;
  packages: string[];
}

interface Pkg {
  publicId: string;
  key: string;
  name: string;
  description: string | null;
  status: string;
  streams: string[];
}

interface Integration {
  publicId: string;
  invitedEmail: string;
  status: string;
  receivingTenantPublicId: string | null;
  subscriptions: Array<{ catalogEntryPublicId: string; status: string }>;
}

interface ProducerData {
  streams: Stream[];
  packages: Pkg[];
  integrations: Integration[];
}

const TABS = ['streams', 'packages', 'integrations', 'blocks', 'activations', 'metrics'] as const;
const LABEL: Record<(typeof TABS)[number], string> = {
  streams: 'Streams', packages: 'Packages', integrations: 'Integrations', blocks: 'Blocks', activations: 'Activations', metrics: 'Metrics',
};

/** The producer view of a workspace (/waas): streams, packages, integrations, blocks, activations, metrics. */
export function ProducerPage(props: { tenant: string; tab: string }) {
  const t = props.tenant;
  const tab = (TABS as readonly string[]).includes(props.tab) ? (props.tab as (typeof TABS)[number]) : 'streams';
  const [data, setData] = useState<ProducerData | null>(null);
  const [error, setError] = useState<unknown>(null);
  const reload = async () => {
    try {
      const [c, p, i] = await Promise.all([
        get<Data<Stream>>(`/waas/producer/${seg(t)}/catalog`),
        get<Data<Pkg>>(`/waas/producer/${seg(t)}/packages`),
        get<Data<Integration>>(`/waas/producer/${seg(t)}/integrations`),
      ]);
      setData({ streams: c.data, packages: p.data, integrations: i.data });
      setError(null);
    } catch (err) {
      setError(err);
    }
  };
  // Each tab shows the current state: partners accept and subscribe meanwhile.
  useEffect(() => void reload(), [t, tab]);
  return (
    <section>
      <p class="crumbs"><a href={href([])}>Home</a> / <a href={href(['w', t])}>workspace</a> / producer</p>
      <h1>Producer <code>{t}</code></h1>
      <Tabs active={tab} tabs={TABS.map((id) => ({ id, label: LABEL[id], href: href(['w', t, 'producer', id]) }))} />
      {tab === 'metrics' ? <Metrics tenant={t} />
        : error ? <ErrorLine error={error} />
        : !data ? <Loading />
        : tab === 'packages' ? <Packages tenant={t} data={data} reload={reload} />
        : tab === 'integrations' ? <Integrations tenant={t} data={data} reload={reload} />
        : tab === 'blocks' ? <Blocks tenant={t} data={data} reload={reload} />
        : tab === 'activations' ? <Activations tenant={t} data={data} />
        : <Streams tenant={t} data={data} reload={reload} />}
    </section>
  );
}

type Props = { tenant: string; data: ProducerData; reload: () => Promise<void> };

function Streams({ tenant, data, reload }: Props) {
  const canWrite = useCanWrite(tenant);
  const empty = { name: '', description: '', eventTypes: '', payloadSchema: '', isPublic: true };
  const [form, setForm] = useState(empty);
  const [error, setError] = useState<unknown>(null);
  const fe = (f: string) => (error instanceof ApiError ? error.forField(f) : undefined);
  const save = async (e: Event) => {
    e.preventDefault();
    setError(null);
    try {
      await put('/waas/streams', {
        producerTenantPublicId: tenant,
        name: form.name.trim(),
        description: form.description,
        eventTypes: form.eventTypes.split(/[\s,]+/).filter(Boolean),
        payloadSchema: form.payloadSchema,
        isPublic: form.isPublic,
      });
      setForm(empty);
      await reload();
    } catch (err) {
      setError(err);
    }
  };
  return (
    <div>
      <form class="card" onSubmit={save} data-testid="stream-form">
        <h2>Apply a stream</h2>
        <p class="muted">Declarative (PUT /waas/streams): a new name creates the stream and its queue, an existing one is updated.</p>
        <fieldset disabled={!canWrite}>
          <div class="grid">
            <Field label="Name" id="s-name" error={fe('name')}><input id="s-name" required value={form.name} onInput={(e) => setForm({ ...form, name: val(e) })} /></Field>
            <Field label="Description" id="s-description" error={fe('description')}><input id="s-description" value={form.description} onInput={(e) => setForm({ ...form, description: val(e) })} /></Field>
            <Field label="Event types" id="s-eventTypes" error={fe('eventTypes')} hint="Comma-separated, e.g. order.created, order.paid">
              <input id="s-eventTypes" value={form.eventTypes} onInput={(e) => setForm({ ...form, eventTypes: val(e) })} />
            </Field>
            <Field label="Payload schema" id="s-schema" error={fe('payloadSchema')} hint="Stored verbatim.">
              <textarea id="s-schema" rows={2} value={form.payloadSchema} onInput={(e) => setForm({ ...form, payloadSchema: val(e) })} />
            </Field>
          </div>
          <label class="check"><input type="checkbox" checked={form.isPublic} onChange={(e) => setForm({ ...form, isPublic: checked(e) })} /> Published (otherwise Deprecated)</label>
          <ErrorLine error={error} />
          <button class="primary" type="submit">Apply stream</button>
        </fieldset>
      </form>
      <table class="list" data-testid="streams">
        <thead><tr><th>Stream</th><th>ID</th><th>Status</th><th>Event types</th><th>Packages</th><th /></tr></thead>
        <tbody>
          {data.streams.length === 0 && <tr><td colSpan={6} class="muted">No published streams yet.</td></tr>}
          {data.streams.map((s) => (
            <tr key={s.publicId} data-stream={s.key}>
              <td>{s.name}</td>
              <td><code>{s.publicId}</code></td>
              <td><Badge value={s.status} /></td>
              <td>{s.eventTypes.join(', ') || '—'}</td>
              <td>{s.packages.map((p) => data.packages.find((x) => x.publicId === p)?.name ?? p).join(', ') || '—'}</td>
              <td><button type="button" disabled={!canWrite} onClick={() => setForm({ name: s.name, description: s.description ?? '', eventTypes: s.eventTypes.join(', '), payloadSchema: s.payloadSchema ?? '', isPublic: s.status === 'Published' })}>Edit</button></td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function Packages({ tenant, data, reload }: Props) {
  const canWrite = useCanWrite(tenant);
  const [form, setForm] = useState({ name: '', description: '' });
  const [error, setError] = useState<unknown>(null);
  const base = `/waas/producer/${seg(tenant)}/packages`;
  const create = async (e: Event) => {
    e.preventDefault();
    setError(null);
    try {
      await post(base, { name: form.name.trim(), ...(form.description ? { description: form.description } : {}) });
      setForm({ name: '', description: '' });
      await reload();
    } catch (err) {
      setError(err);
    }
  };
  const fe = (f: string) => (error instanceof ApiError ? error.forField(f) : undefined);
  return (
    <div>
      <form class="card" onSubmit={create} data-testid="package-form">
        <h2>New package</h2>
        <fieldset disabled={!canWrite}>
          <div class="grid">
            <Field label="Name" id="p-name" error={fe('name')}><input id="p-name" required value={form.name} onInput={(e) => setForm({ ...form, name: val(e) })} /></Field>
            <Field label="Description" id="p-description" error={fe('description')}><input id="p-description" value={form.description} onInput={(e) => setForm({ ...form, description: val(e) })} /></Field>
          </div>
          <ErrorLine error={error} />
          <button class="primary" type="submit">Create package</button>
        </fieldset>
      </form>
      {data.packages.length === 0 && <p class="muted">No packages yet.</p>}
      {data.packages.map((p) => <PackageCard key={p.publicId} pkg={p} streams={data.streams} base={base} canWrite={canWrite} reload={reload} />)}
    </div>
  );
}

function PackageCard(props: { pkg: Pkg; streams: Stream[]; base: string; canWrite: boolean; reload: () => Promise<void> }) {
  const p = props.pkg;
  const [name, setName] = useState(p.name);
  const [add, setAdd] = useState('');
  const outside = props.streams.filter((s) => !p.streams.includes(s.publicId));
  const path = `${props.base}/${seg(p.publicId)}`;
  const archived = p.status.toLowerCase() === 'archived';
  return (
    <div class="card" data-package={p.key}>
      <h3>{p.name} <code>{p.publicId}</code> <Badge value={p.status} /></h3>
      <fieldset disabled={!props.canWrite || archived}>
        <div class="row">
          <Field label="Name" id={`pn-${p.publicId}`}><input id={`pn-${p.publicId}`} value={name} onInput={(e) => setName(val(e))} /></Field>
          <ActionButton label="Rename" disabled={name.trim() === p.name} run={async () => { await put(path, { name: name.trim(), ...(p.description ? { description: p.description } : {}) }); await props.reload(); }} />
          <ActionButton label="Archive" kind="danger" confirm={`Archive package ${p.name}?`} run={async () => { await post(`${path}/archive`); await props.reload(); }} />
        </div>
        <ul class="plain">
          {p.streams.map((id) => (
            <li key={id}>
              {props.streams.find((s) => s.publicId === id)?.name ?? id}{' '}
              <ActionButton label="Remove" run={async () => { await del(`${path}/streams/${seg(id)}`); await props.reload(); }} />
            </li>
          ))}
          {p.streams.length === 0 && <li class="muted">No streams in this package.</li>}
        </ul>
        {outside.length > 0 && (
          <div class="row">
            <Field label="Add stream" id={`pa-${p.publicId}`}>
              <select id={`pa-${p.publicId}`} value={add || outside[0]!.publicId} onChange={(e) => setAdd(val(e))}>
                {outside.map((s) => <option key={s.publicId} value={s.publicId}>{s.name}</option>)}
              </select>
            </Field>
            <ActionButton label="Add" run={async () => { await post(`${path}/streams`, { catalogEntryPublicId: add || outside[0]!.publicId }); setAdd(''); await props.reload(); }} />
          </div>
        )}
      </fieldset>
    </div>
  );
}

function Integrations({ tenant, data, reload }: Props) {
  const canWrite = useCanWrite(tenant);
  const [email, setEmail] = useState('');
  const [link, setLink] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const invite = async (e: Event) => {
    e.preventDefault();
    setError(null);
    try {
      const res = await post<{ publicId: string; inviteToken: string }>('/waas/integrations', { producerTenantPublicId: tenant, email: email.trim() });
      const q = new URLSearchParams({ token: res.inviteToken, producer: tenant });
      setLink(`${location.origin}/console/#/accept/${encodeURIComponent(res.publicId)}?${q}`);
      setEmail('');
      await reload();
    } catch (err) {
      setError(err);
    }
  };
  const streamName = (id: string) => data.streams.find((s) => s.publicId === id)?.name ?? id;
  return (
    <div>
      {link && <SecretOnce label="Invite link (hand it to the partner)" value={link} onDone={() => setLink(null)} />}
      <form class="card" onSubmit={invite} data-testid="invite-form">
        <h2>Invite a partner</h2>
        <fieldset disabled={!canWrite}>
          <Field label="Partner e-mail" id="i-email" error={error instanceof ApiError ? error.forField('email') : undefined}>
            <input id="i-email" type="email" required value={email} onInput={(e) => setEmail(val(e))} />
          </Field>
          <ErrorLine error={error} />
          <button class="primary" type="submit">Invite</button>
        </fieldset>
      </form>
      <table class="list" data-testid="integrations">
        <thead><tr><th>Integration</th><th>Invited</th><th>Status</th><th>Receiving workspace</th><th>Subscriptions</th></tr></thead>
        <tbody>
          {data.integrations.length === 0 && <tr><td colSpan={5} class="muted">No integrations yet.</td></tr>}
          {data.integrations.map((i) => (
            <tr key={i.publicId} data-integration={i.publicId}>
              <td><code>{i.publicId}</code></td>
              <td>{i.invitedEmail}</td>
              <td><Badge value={i.status} /></td>
              <td>{i.receivingTenantPublicId ? <code>{i.receivingTenantPublicId}</code> : '—'}</td>
              <td>{i.subscriptions.map((s) => <span class="delivery" key={s.catalogEntryPublicId}>{streamName(s.catalogEntryPublicId)}: <Badge value={s.status} /></span>)}{i.subscriptions.length === 0 && '—'}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

interface StoredBlocks {
  streams: Array<{ catalogEntryPublicId: string; name: string; blockedAt: string }>;
  packages: Array<{ packagePublicId: string; name: string; blockedAt: string }>;
  pausedSubscriptions: Array<{ publicId: string; catalogEntryPublicId: string; status: 'paused' }>;
}

/**
 * Blocks per integration, as stored (GET …/blocks): each toggle shows whether
 * the block exists and since when, and each row names the subscriptions it
 * covers with their live/paused state now (another block may hold one paused).
 */
function Blocks({ tenant, data, reload }: Props) {
  const canWrite = useCanWrite(tenant);
  const active = data.integrations.filter((i) => i.status !== 'Pending');
  const [chosen, setChosen] = useState('');
  const [stored, setStored] = useState<{ integration: string; blocks: StoredBlocks } | null>(null);
  const [error, setError] = useState<unknown>(null);
  const integration = active.find((i) => i.publicId === chosen) ?? active[0];
  const base = integration ? `/waas/producer/${seg(tenant)}/integrations/${seg(integration.publicId)}/blocks` : '';
  const load = async () => {
    if (!integration) return;
    try {
      setStored({ integration: integration.publicId, blocks: await get<StoredBlocks>(base) });
      setError(null);
    } catch (err) {
      setError(err);
    }
  };
  useEffect(() => void load(), [base]);
  if (!integration) return <p class="muted">No accepted integration yet.</p>;
  const blocks = stored?.integration === integration.publicId ? stored.blocks : null;
  const subscribed = new Set(integration.subscriptions.map((s) => s.catalogEntryPublicId));
  const paused = new Set(blocks?.pausedSubscriptions.map((s) => s.catalogEntryPublicId) ?? []);
  const toggle = async (kind: 'streams' | 'packages', id: string, block: boolean) => {
    const path = `${base}/${kind}/${seg(id)}`;
    if (block) await post(path);
    else await del(path);
    await Promise.all([load(), reload()]);
  };
  const row = (kind: 'streams' | 'packages', id: string, label: string, covers: string[]) => {
    const since = kind === 'streams'
      ? blocks?.streams.find((b) => b.catalogEntryPublicId === id)?.blockedAt
      : blocks?.packages.find((b) => b.packagePublicId === id)?.blockedAt;
    const pauses = covers.filter((c) => subscribed.has(c));
    return (
      <tr key={`${kind}/${id}`} data-block={`${kind}/${id}`}>
        <td>{label} <code>{id}</code></td>
        <td>{!blocks ? <span class="muted">…</span> : since ? <span><Badge value="blocked" /> <span class="muted">since {when(since)}</span></span> : <Badge value="unblocked" />}</td>
        <td>
          {pauses.length === 0 ? <span class="muted">no subscription</span>
            : pauses.map((c) => <span class="delivery" key={c}>{data.streams.find((s) => s.publicId === c)?.name ?? c}: <Badge value={paused.has(c) ? 'paused' : 'live'} /></span>)}
        </td>
        <td class="actions">
          <ActionButton label="Block" kind="danger" disabled={!canWrite || !blocks || since !== undefined} run={() => toggle(kind, id, true)} />
          <ActionButton label="Unblock" disabled={!canWrite || !blocks || since === undefined} run={() => toggle(kind, id, false)} />
        </td>
      </tr>
    );
  };
  return (
    <div>
      <Field label="Integration" id="b-integration">
        <select id="b-integration" value={integration.publicId} onChange={(e) => setChosen(val(e))}>
          {active.map((i) => <option key={i.publicId} value={i.publicId}>{i.invitedEmail} ({i.publicId})</option>)}
        </select>
      </Field>
      <ErrorLine error={error} />
      <table class="list" data-testid="blocks">
        <thead><tr><th>Stream or package</th><th>Block</th><th>Subscriptions it covers (now)</th><th /></tr></thead>
        <tbody>
          {data.streams.map((s) => row('streams', s.publicId, `Stream ${s.name}`, [s.publicId]))}
          {data.packages.filter((p) => p.status.toLowerCase() !== 'archived').map((p) => row('packages', p.publicId, `Package ${p.name}`, p.streams))}
        </tbody>
      </table>
    </div>
  );
}

interface ActivationItem {
  publicId: string;
  groupKey: string;
  status: string;
  integrationPublicId: string;
}

/** Activations by group key: the routing gate opens for (producer, group key, integration). Listed from the server. */
function Activations({ tenant, data }: { tenant: string; data: ProducerData }) {
  const canWrite = useCanWrite(tenant);
  const active = data.integrations.filter((i) => i.status !== 'Pending');
  const [picked, setForm] = useState({ groupKey: '', integration: '' });
  // The list may arrive after the first render: default to its first integration at render time.
  const form = { ...picked, integration: picked.integration || active[0]?.publicId || '' };
  const [list, setList] = useState<ActivationItem[] | null>(null);
  const [filter, setFilter] = useState('');
  const [error, setError] = useState<unknown>(null);
  const load = async () => {
    try {
      const q = filter.trim() ? `?${new URLSearchParams({ groupKey: filter.trim() })}` : '';
      setList((await get<Data<ActivationItem>>(`/waas/producer/${seg(tenant)}/activations${q}`)).data);
    } catch (err) {
      setError(err);
    }
  };
  useEffect(() => void load(), [tenant, filter]);
  const send = async (method: 'POST' | 'DELETE', groupKey: string, integration: string) => {
    const body = { producerTenantPublicId: tenant, groupKey, integrationPublicId: integration };
    if (method === 'POST') await post('/waas/activations', body);
    else await del('/waas/activations', body);
    await load();
  };
  const activate = async (e: Event) => {
    e.preventDefault();
    setError(null);
    try {
      await send('POST', form.groupKey.trim(), form.integration);
    } catch (err) {
      setError(err);
    }
  };
  const email = (id: string) => data.integrations.find((i) => i.publicId === id)?.invitedEmail;
  return (
    <div>
      <form class="card" onSubmit={activate} data-testid="activation-form">
        <h2>Activate a group key</h2>
        <p class="muted">An event reaches an integration only when its group key is activated for it.</p>
        <fieldset disabled={!canWrite}>
          <div class="grid">
            <Field label="Group key" id="a-groupKey" error={error instanceof ApiError ? error.forField('groupKey') : undefined}>
              <input id="a-groupKey" required value={form.groupKey} onInput={(e) => setForm({ ...form, groupKey: val(e) })} />
            </Field>
            <Field label="Integration" id="a-integration">
              <select id="a-integration" value={form.integration} onChange={(e) => setForm({ ...form, integration: val(e) })}>
                {active.map((i) => <option key={i.publicId} value={i.publicId}>{i.invitedEmail} ({i.publicId})</option>)}
              </select>
            </Field>
          </div>
          <ErrorLine error={error} />
          <div class="row">
            <button class="primary" type="submit" disabled={!form.integration}>Activate</button>
            <ActionButton label="Revoke" kind="danger" disabled={!form.integration || !form.groupKey} run={() => send('DELETE', form.groupKey.trim(), form.integration)} />
          </div>
        </fieldset>
      </form>
      <Field label="Show group key" id="a-filter" hint="Empty: every group key.">
        <input id="a-filter" type="search" value={filter} onChange={(e) => setFilter(val(e))} />
      </Field>
      {!list ? <Loading /> : (
        <table class="list" data-testid="activations">
          <thead><tr><th>Activation</th><th>Group key</th><th>Integration</th><th>Status</th><th /></tr></thead>
          <tbody>
            {list.length === 0 && <tr><td colSpan={5} class="muted">No activations{filter.trim() ? ' for this group key' : ''}.</td></tr>}
            {list.map((d) => (
              <tr key={d.publicId} data-activation={d.publicId}>
                <td><code>{d.publicId}</code></td>
                <td>{d.groupKey}</td>
                <td>{email(d.integrationPublicId) ?? ''} <code>{d.integrationPublicId}</code></td>
                <td><Badge value={d.status} /></td>
                <td>{d.status === 'Active'
                  ? <ActionButton label="Revoke" kind="danger" disabled={!canWrite} run={() => send('DELETE', d.groupKey, d.integrationPublicId)} />
                  : <ActionButton label="Activate again" disabled={!canWrite} run={() => send('POST', d.groupKey, d.integrationPublicId)} />}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}

function Metrics({ tenant }: { tenant: string }) {
  const [history, setHistory] = useState<'1h' | '24h' | '7d'>('1h');
  return (
    <div>
      <h2>Metrics</h2>
      <div class="row" role="group" aria-label="History">
        {(['1h', '24h', '7d'] as const).map((h) => (
          <button key={h} type="button" class={h === history ? 'primary' : 'plain'} aria-pressed={h === history} onClick={() => setHistory(h)}>{h}</button>
        ))}
      </div>
      <MetricsChart tenant={tenant} history={history} />
    </div>
  );
}
