import { lazy } from 'preact/compat';
import { useEffect, useState } from 'preact/hooks';
import { api, del, get, post, put, seg } from '../api';
import { href, navigate } from '../route';
import { useCanWrite, useSession } from '../session';
import type { Data, Items, Queue, Route, Target } from '../types';
import { ActionButton, Badge, ErrorLine, Field, Loading, SecretOnce, Tabs, val, when } from '../ui';
import { QueueForm } from './queue-form';
import { TargetForm } from './target-form';
import { ActivityPage } from './activity';
import { HealthBadge, ReplayPanel, healthLine, rate, useTargetHealth } from './target-health';

// The overview (and its chart library) loads only when opened.
const OverviewPage = lazy(() => import('./overview').then((m) => m.OverviewPage));

/** A workspace: queues, targets, routes and signing keys (docs/api.md#configuration-api); archive and restore it. */
export function WorkspacePage(props: { tenant: string; tab: string; sub: string | undefined }) {
  const { session } = useSession();
  const ws = session.workspaces.find((w) => w.tenantPublicId === props.tenant);
  const t = props.tenant;
  const tabs = [
    { id: 'overview', label: 'Overview', href: href(['w', t, 'overview']) },
    { id: 'queues', label: 'Queues', href: href(['w', t, 'queues']) },
    { id: 'targets', label: 'Targets', href: href(['w', t, 'targets']) },
    { id: 'routes', label: 'Routes', href: href(['w', t, 'routes']) },
    { id: 'signing-keys', label: 'Signing keys', href: href(['w', t, 'signing-keys']) },
    { id: 'producer', label: 'Producer', href: href(['w', t, 'producer']) },
    { id: 'partner', label: 'Partner', href: href(['w', t, 'partner']) },
    { id: 'sandbox', label: 'Sandbox', href: href(['w', t, 'sandbox']) },
    { id: 'activity', label: 'Activity', href: href(['w', t, 'activity']) },
  ];
  return (
    <section>
      <p class="crumbs"><a href={href([])}>Home</a> / workspace</p>
      <h1>{ws?.name ?? 'Workspace'} <code>{t}</code></h1>
      {ws?.role === 'Member' && <p class="notice" data-testid="read-only">You are a Member of this workspace: everything is read-only.</p>}
      <WorkspaceArchive tenant={t} />
      <WorkspaceRetention tenant={t} />
      <Tabs tabs={tabs} active={props.tab} />
      {props.tab === 'overview' ? <OverviewPage tenant={t} />
        : props.tab === 'targets' ? <Targets tenant={t} sub={props.sub} />
        : props.tab === 'routes' ? <Routes tenant={t} />
        : props.tab === 'signing-keys' ? <SigningKeys tenant={t} />
        : props.tab === 'activity' ? <ActivityPage tenant={t} />
        : <Queues tenant={t} sub={props.sub} />}
    </section>
  );
}

/** The workspace's archived flag: a banner with Restore while archived, an Archive button otherwise. */
function WorkspaceArchive(props: { tenant: string }) {
  const t = props.tenant;
  const canWrite = useCanWrite(t);
  const { data, reload } = useLoad(() => get<{ archived: boolean }>(`/v1/tenants/${seg(t)}`), [t]);
  if (!data) return null;
  if (data.archived) {
    return (
      <div class="banner" role="alert" data-testid="workspace-archived">
        This workspace is archived: every queue refuses events (409 queue_archived) until it is restored.{' '}
        <ActionButton label="Restore workspace" disabled={!canWrite} run={async () => { await post(`/v1/tenants/${seg(t)}/restore`); await reload(); }} />
      </div>
    );
  }
  return (
    <p class="workspace-actions">
      <ActionButton label="Archive workspace" kind="danger" disabled={!canWrite} testid="archive-workspace"
        confirm="Archive this workspace? Every queue refuses events until it is restored."
        run={async () => { await post(`/v1/tenants/${seg(t)}/archive`); await reload(); }} />
    </p>
  );
}

/**
 * How long the service keeps this workspace's events (docs/operations.md#retention):
 * its own period, shorter than the service's, or the service's when empty.
 */
function WorkspaceRetention(props: { tenant: string }) {
  const t = props.tenant;
  const canWrite = useCanWrite(t);
  const { data, reload } = useLoad(() => get<{ retentionHours: number | null }>(`/v1/tenants/${seg(t)}`), [t]);
  const [draft, setDraft] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  if (!data) return null;
  const shown = draft ?? (data.retentionHours === null ? '' : String(data.retentionHours));
  const save = async () => {
    try {
      const trimmed = shown.trim();
      await api('PATCH', `/v1/tenants/${seg(t)}`, { retentionHours: trimmed === '' ? null : Number(trimmed) });
      setDraft(null);
      setError(null);
      await reload();
    } catch (err) {
      setError(err);
    }
  };
  return (
    <form class="inline-form" data-testid="workspace-retention" onSubmit={(e) => { e.preventDefault(); void save(); }}>
      <Field label="Keep events for (hours)" id="ws-retention" hint="Empty: the service's retention. A workspace may keep its events for less, not more.">
        <input id="ws-retention" inputMode="decimal" value={shown} disabled={!canWrite} onInput={(e) => setDraft(val(e))} />
      </Field>
      <button type="submit" disabled={!canWrite || draft === null}>Save retention</button>
      <ErrorLine error={error} />
    </form>
  );
}

function useLoad<T>(load: () => Promise<T>, deps: unknown[]): { data: T | null; error: unknown; reload: () => Promise<void> } {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<unknown>(null);
  const reload = async () => {
    try {
      setData(await load());
      setError(null);
    } catch (err) {
      setError(err);
    }
  };
  useEffect(() => void reload(), deps);
  return { data, error, reload };
}

function queueState(q: Queue): string {
  return q.state ?? (q.archived ? 'archived' : q.ingress);
}

function Queues(props: { tenant: string; sub: string | undefined }) {
  const t = props.tenant;
  const canWrite = useCanWrite(t);
  const { data, error, reload } = useLoad(() => get<Items<Queue>>(`/v1/tenants/${seg(t)}/queues`).then((r) => r.items), [t]);
  if (props.sub === 'new' || (props.sub && data)) {
    const existing = props.sub === 'new' ? null : data?.find((q) => q.name === props.sub) ?? null;
    if (props.sub !== 'new' && !existing) return <p class="error">No queue named {props.sub}.</p>;
    return <QueueForm tenant={t} queue={existing} canWrite={canWrite} onSaved={async () => { await reload(); navigate(['w', t, 'queues']); }} />;
  }
  if (error) return <ErrorLine error={error} />;
  if (!data) return <Loading />;
  const setArchived = async (q: Queue, archived: boolean) => {
    if (archived) await post(`/v1/tenants/${seg(t)}/queues/${seg(q.name)}/archive`);
    else await post(`/v1/tenants/${seg(t)}/queues/${seg(q.name)}/restore`);
    await reload();
  };
  return (
    <div>
      <p><a class={`button primary${canWrite ? '' : ' disabled'}`} aria-disabled={!canWrite} href={canWrite ? href(['w', t, 'queues', 'new']) : undefined}>New queue</a></p>
      <table class="list" data-testid="queues">
        <thead><tr><th>Queue</th><th>State</th><th>Auth</th><th>Signing</th><th /></tr></thead>
        <tbody>
          {data.length === 0 && <tr><td colSpan={5} class="muted">No queues yet.</td></tr>}
          {data.map((q) => {
            const state = queueState(q);
            return (
              <tr key={q.name} data-queue={q.name}>
                <td><a href={href(['w', t, 'queues', q.name])}>{q.name}</a></td>
                <td>
                  <Badge value={state} />
                  {state === 'paused' && q.pausedReason && <span class="muted"> {q.pausedReason}</span>}
                </td>
                <td>{q.authMode}</td>
                <td>{q.outboundSigning}</td>
                <td class="actions">
                  <a href={href(['w', t, 'queues', q.name, 'events'])}>Events</a>
                  {q.archived
                    ? <ActionButton label="Restore" disabled={!canWrite} run={() => setArchived(q, false)} />
                    : <ActionButton label="Archive" kind="danger" disabled={!canWrite} confirm={`Archive ${q.name}? It takes no events until restored.`} run={() => setArchived(q, true)} />}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

function Targets(props: { tenant: string; sub: string | undefined }) {
  const t = props.tenant;
  const canWrite = useCanWrite(t);
  const { data, error, reload } = useLoad(() => get<Items<Target>>(`/v1/tenants/${seg(t)}/targets`).then((r) => r.items), [t]);
  // Health (state, failing since, last error, success rate) is read again every few seconds.
  const { health, bump } = useTargetHealth(t);
  const [replaying, setReplaying] = useState<string | null>(null);
  // Health is polled, the list is not: when they disagree on disabled (delivery disabled one meanwhile), read the list again.
  useEffect(() => {
    if (data && health && data.some((x) => health.items.some((h) => h.target === x.name && (h.state === 'disabled') !== x.disabled))) void reload();
  }, [health]);
  if (props.sub === 'new' || (props.sub && data)) {
    const existing = props.sub === 'new' ? null : data?.find((x) => x.name === props.sub) ?? null;
    if (props.sub !== 'new' && !existing) return <p class="error">No target named {props.sub}.</p>;
    return <TargetForm tenant={t} target={existing} canWrite={canWrite} onSaved={async () => { await reload(); navigate(['w', t, 'targets']); }} />;
  }
  if (error) return <ErrorLine error={error} />;
  if (!data) return <Loading />;
  const of = (name: string) => health?.items.find((h) => h.target === name);
  // A replay starts a little before the trouble did: what the target acknowledged is never sent again anyway.
  const replaySince = (name: string) => {
    const since = of(name)?.failingSince;
    return since ? new Date(new Date(since).getTime() - 5 * 60_000).toISOString() : null;
  };
  const disabled = data.filter((x) => x.disabled);
  return (
    <div>
      <p><a class={`button primary${canWrite ? '' : ' disabled'}`} aria-disabled={!canWrite} href={canWrite ? href(['w', t, 'targets', 'new']) : undefined}>New target</a></p>
      {disabled.map((x) => (
        <div class="banner" role="alert" key={`d-${x.name}`} data-testid="disabled-banner">
          Target <strong>{x.name}</strong> is disabled because {x.disabledReason ?? 'it failed for too long'}{x.disabledAt ? ` (since ${when(x.disabledAt)})` : ''}.{' '}
          <ActionButton label="Re-enable" disabled={!canWrite} run={async () => { await post(`/v1/tenants/${seg(t)}/targets/${seg(x.name)}/enable`); await reload(); bump(); setReplaying(x.name); }} />
          {' '}<button type="button" disabled={!canWrite} onClick={() => setReplaying(x.name)}>Replay what it missed</button>
        </div>
      ))}
      {replaying && <ReplayPanel key={replaying} tenant={t} target={replaying} since={replaySince(replaying)} canWrite={canWrite} />}
      <table class="list" data-testid="targets">
        <thead><tr><th>Target</th><th>URL</th><th>Auth</th><th>State</th><th>Failing since</th><th>Last error</th><th>Success (1 h)</th><th /></tr></thead>
        <tbody>
          {data.length === 0 && <tr><td colSpan={8} class="muted">No targets yet.</td></tr>}
          {data.map((x) => {
            const h = of(x.name);
            return (
              <tr key={x.name} data-target={x.name} data-state={h?.state ?? (x.disabled ? 'disabled' : 'active')}>
                <td><a href={href(['w', t, 'targets', x.name])}>{x.name}</a></td>
                <td class="wrap"><code>{x.url}</code></td>
                <td>{x.auth.mode}</td>
                <td>{h ? <HealthBadge health={h} /> : <Badge value={x.disabled ? 'disabled' : 'active'} />}</td>
                <td title={h ? healthLine(h) : undefined}>{when(h?.failingSince)}</td>
                <td class="wrap">{h?.lastError ?? '—'}</td>
                <td>{h ? rate(h) : '—'}</td>
                <td class="actions">
                  {h && h.state !== 'active' && h.state !== 'disabled' && (
                    <button type="button" disabled={!canWrite} onClick={() => setReplaying(x.name)}>Replay</button>
                  )}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

function Routes(props: { tenant: string }) {
  const t = props.tenant;
  const canWrite = useCanWrite(t);
  const { data, error, reload } = useLoad(async () => {
    const [routes, queues, targets] = await Promise.all([
      get<Items<Route>>(`/v1/tenants/${seg(t)}/routes`),
      get<Items<Queue>>(`/v1/tenants/${seg(t)}/queues`),
      get<Items<Target>>(`/v1/tenants/${seg(t)}/targets`),
    ]);
    return { routes: routes.items, queues: queues.items.map((q) => q.name), targets: targets.items.map((x) => x.name) };
  }, [t]);
  const [pick, setPick] = useState({ queue: '', target: '' });
  const [formError, setFormError] = useState<unknown>(null);
  if (error) return <ErrorLine error={error} />;
  if (!data) return <Loading />;
  const queue = pick.queue || data.queues[0] || '';
  const target = pick.target || data.targets[0] || '';
  const add = async (e: Event) => {
    e.preventDefault();
    setFormError(null);
    try {
      await put(`/v1/tenants/${seg(t)}/queues/${seg(queue)}/targets/${seg(target)}`);
      await reload();
    } catch (err) {
      setFormError(err);
    }
  };
  return (
    <div>
      <form class="card" onSubmit={add}>
        <h2>Route a queue to a target</h2>
        <fieldset disabled={!canWrite}>
          <div class="grid">
            <Field label="Queue" id="route-queue">
              <select id="route-queue" value={queue} onChange={(e) => setPick({ ...pick, queue: val(e) })}>
                {data.queues.map((q) => <option key={q} value={q}>{q}</option>)}
              </select>
            </Field>
            <Field label="Target" id="route-target">
              <select id="route-target" value={target} onChange={(e) => setPick({ ...pick, target: val(e) })}>
                {data.targets.map((x) => <option key={x} value={x}>{x}</option>)}
              </select>
            </Field>
          </div>
          <ErrorLine error={formError} />
          <button class="primary" type="submit" disabled={!queue || !target}>Add route</button>
        </fieldset>
      </form>
      <table class="list" data-testid="routes">
        <thead><tr><th>Queue</th><th>Target</th><th /></tr></thead>
        <tbody>
          {data.routes.length === 0 && <tr><td colSpan={3} class="muted">No routes yet.</td></tr>}
          {data.routes.map((r) => (
            <tr key={`${r.queue}>${r.target}`}>
              <td>{r.queue}</td>
              <td>{r.target}</td>
              <td><ActionButton label="Remove" kind="danger" disabled={!canWrite} run={async () => { await del(`/v1/tenants/${seg(t)}/queues/${seg(r.queue)}/targets/${seg(r.target)}`); await reload(); }} /></td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

type SigningKeyMade = { keyId: string; algorithm: 'hmac-sha256'; secret: string; standardSecret: string } | { keyId: string; algorithm: 'ed25519'; publicKey: string };
type SigningKeyListed = { keyId: string; algorithm: 'hmac-sha256' | 'ed25519'; publicKey?: string; createdAt: string };

function SigningKeys(props: { tenant: string }) {
  const t = props.tenant;
  const canWrite = useCanWrite(t);
  const [algorithm, setAlgorithm] = useState<'hmac-sha256' | 'ed25519'>('hmac-sha256');
  const [made, setMade] = useState<SigningKeyMade | null>(null);
  const { data, error, reload } = useLoad(() => get<Data<SigningKeyListed>>(`/v1/tenants/${seg(t)}/signing-keys`).then((r) => r.data), [t]);
  const newestHmac = data?.find((k) => k.algorithm === 'hmac-sha256')?.keyId;
  return (
    <div>
      {made?.algorithm === 'hmac-sha256' && <SecretOnce label="Signing secret" value={made.secret} also={{ label: 'The same key for Standard Webhooks libraries (new Webhook(…))', value: made.standardSecret }} onDone={() => setMade(null)} />}
      {made?.algorithm === 'ed25519' && (
        <div class="secret" role="status">
          <p>
            <strong>Public key</strong> of the new ed25519 key — receivers verify the <code>v1a</code> entries of Standard Webhooks deliveries with it. The private key never leaves streamgate.
          </p>
          <code class="secret-value" data-testid="public-key">{made.publicKey}</code>
          <div class="row">
            <button type="button" onClick={() => setMade(null)}>Done</button>
          </div>
        </div>
      )}
      <div class="row">
        <Field label="Algorithm" id="signing-key-algorithm" hint="ed25519 keys sign only the v1a entries of standard queues' deliveries.">
          <select id="signing-key-algorithm" value={algorithm} disabled={!canWrite} onChange={(e) => setAlgorithm(val(e) as 'hmac-sha256' | 'ed25519')}>
            <option value="hmac-sha256">HMAC-SHA256 (shared secret)</option>
            <option value="ed25519">Ed25519 (public key)</option>
          </select>
        </Field>
        <p>
          <ActionButton label="Create signing key" kind="primary" disabled={!canWrite} run={async () => {
            setMade(await post<SigningKeyMade>(`/v1/tenants/${seg(t)}/signing-keys`, algorithm === 'ed25519' ? { algorithm } : {}));
            await reload();
          }} />
        </p>
      </div>
      <p class="muted">Any active HMAC key verifies signed-request ingress; the newest signs outbound deliveries of hmac queues. Standard queues are signed by every active key: a v1 entry per HMAC key, a v1a entry per ed25519 key.</p>
      {error ? <ErrorLine error={error} /> : !data ? <Loading /> : (
        <table class="list" data-testid="signing-keys">
          <thead><tr><th>Key ID</th><th>Algorithm</th><th>Created</th><th /></tr></thead>
          <tbody>
            {data.length === 0 && <tr><td colSpan={4} class="muted">No signing keys.</td></tr>}
            {data.map((k) => (
              <tr key={k.keyId}>
                <td><code>{k.keyId}</code>{k.keyId === newestHmac && <span class="muted"> (signs outbound)</span>}{k.publicKey && <div><code class="muted" title="Public key">{k.publicKey}</code></div>}</td>
                <td>{k.algorithm}</td>
                <td>{when(k.createdAt)}</td>
                <td><ActionButton label="Revoke" kind="danger" disabled={!canWrite} confirm={`Revoke ${k.keyId}?`} run={async () => { await del(`/v1/tenants/${seg(t)}/signing-keys/${seg(k.keyId)}`); await reload(); }} /></td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}
