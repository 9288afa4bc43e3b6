import { useEffect, useState } from 'preact/hooks';
import { del, get, post, put, seg } from '../api';
import { href } from '../route';
import { useCanWrite } from '../session';
import type { Data, Items, Route, Target } from '../types';
import { ActionButton, Badge, ErrorLine, Loading, val } from '../ui';

interface Subscription {
  publicId: string;
  catalogEntryPublicId: string;
  status: 'live' | 'paused';
  receivingQueue: string;
}

interface CatalogItem {
  publicId: string;
  key: string;
  name: string;
  description: string | null;
  eventTypes: string[];
}

/** One integration this workspace receives through (GET /waas/integrations). */
interface Received {
  integrationPublicId: string;
  producerTenantPublicId: string;
  receivingTenantPublicId: string;
  status: string;
  subscriptions: number;
}

const received = (tenant: string) => get<Data<Received>>(`/waas/integrations?${new URLSearchParams({ receivingTenantPublicId: tenant })}`);

/**
 * The partner's side of an integration, in its receiving workspace:
 * subscriptions (live or paused), subscribe/unsubscribe to the producer's
 * streams, and routing each receiving queue to the partner's own targets.
 * Without an integration in the address, the integrations it receives through.
 */
export function PartnerPage(props: { tenant: string; integration: string; producer: string }) {
  if (!props.integration) return <PartnerHome tenant={props.tenant} />;
  return <Subscriptions tenant={props.tenant} integration={props.integration} producer={props.producer} />;
}

function PartnerHome({ tenant }: { tenant: string }) {
  const [list, setList] = useState<Received[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    received(tenant).then((r) => { setList(r.data); setError(null); }, setError);
  }, [tenant]);
  return (
    <section>
      <p class="crumbs"><a href={href([])}>Home</a> / <a href={href(['w', tenant])}>workspace</a> / partner</p>
      <h1>Partner subscriptions</h1>
      <ErrorLine error={error} />
      {!list ? (!error && <Loading />) : (
        <table class="list" data-testid="received-integrations">
          <thead><tr><th>Integration</th><th>Producer</th><th>Status</th><th>Subscriptions</th></tr></thead>
          <tbody>
            {list.length === 0 && <tr><td colSpan={4} class="muted">This workspace receives through no integration yet. Accept an invitation to add one.</td></tr>}
            {list.map((i) => (
              <tr key={i.integrationPublicId} data-integration={i.integrationPublicId}>
                <td><a href={href(['w', tenant, 'partner', i.integrationPublicId], { producer: i.producerTenantPublicId })}><code>{i.integrationPublicId}</code></a></td>
                <td data-label="Producer"><code>{i.producerTenantPublicId}</code></td>
                <td data-label="Status"><Badge value={i.status} /></td>
                <td data-label="Subscriptions">{i.subscriptions}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

function Subscriptions(props: { tenant: string; integration: string; producer: string }) {
  const t = props.tenant;
  const canWrite = useCanWrite(t);
  const [subs, setSubs] = useState<Subscription[] | null>(null);
  const [catalog, setCatalog] = useState<CatalogItem[]>([]);
  const [targets, setTargets] = useState<string[]>([]);
  const [routes, setRoutes] = useState<Route[]>([]);
  const [producer, setProducer] = useState(props.producer);
  const [error, setError] = useState<unknown>(null);
  const base = `/waas/integrations/${seg(props.integration)}/subscriptions`;
  const reload = async () => {
    try {
      const [s, tg, r] = await Promise.all([
        get<Data<Subscription>>(base),
        get<Items<Target>>(`/v1/tenants/${seg(t)}/targets`),
        get<Items<Route>>(`/v1/tenants/${seg(t)}/routes`),
      ]);
      const producer = props.producer || (await received(t)).data.find((i) => i.integrationPublicId === props.integration)?.producerTenantPublicId;
      const streams = producer ? (await get<Data<CatalogItem>>(`/waas/producer/${seg(producer)}/catalog`)).data : [];
      // Shown together: the page renders once subscriptions arrive, and a catalog set after them
      // showed "The producer publishes no stream" meanwhile.
      setCatalog(streams);
      setProducer(producer ?? '');
      setTargets(tg.items.map((x) => x.name));
      setRoutes(r.items);
      setSubs(s.data);
      setError(null);
    } catch (err) {
      setError(err);
    }
  };
  useEffect(() => void reload(), [t, props.integration, props.producer]);
  if (error && !subs) return <ErrorLine error={error} />;
  if (!subs) return <Loading />;
  const name = (cat: string) => catalog.find((c) => c.publicId === cat)?.name ?? cat;
  const subscribed = new Set(subs.map((s) => s.catalogEntryPublicId));
  return (
    <section>
      <p class="crumbs"><a href={href([])}>Home</a> / <a href={href(['w', t])}>workspace</a> / <a href={href(['w', t, 'partner'])}>partner</a></p>
      <h1>Subscriptions of <code>{props.integration}</code></h1>
      <ErrorLine error={error} />
      <table class="list" data-testid="subscriptions">
        <thead><tr><th>Stream</th><th>State</th><th>Receiving queue</th><th>Routed to</th><th /></tr></thead>
        <tbody>
          {subs.length === 0 && <tr><td colSpan={5} class="muted">No subscriptions yet.</td></tr>}
          {subs.map((s) => (
            <tr key={s.publicId} data-subscription={s.catalogEntryPublicId}>
              <td>{name(s.catalogEntryPublicId)}</td>
              <td><Badge value={s.status} title={s.status === 'paused' ? 'The producer blocked this stream or a package holding it' : undefined} /></td>
              <td><a href={href(['w', t, 'queues', s.receivingQueue, 'events'])}>{s.receivingQueue}</a></td>
              <td><RouteCell tenant={t} queue={s.receivingQueue} targets={targets} routes={routes} canWrite={canWrite} reload={reload} /></td>
              <td><ActionButton label="Unsubscribe" kind="danger" disabled={!canWrite} confirm={`Unsubscribe from ${name(s.catalogEntryPublicId)}?`} run={async () => { await del(`${base}/${seg(s.publicId)}`); await reload(); }} /></td>
            </tr>
          ))}
        </tbody>
      </table>
      <p class="muted">No target yet? <a href={href(['w', t, 'targets', 'new'])}>Create one</a> in this workspace, then route the receiving queue to it here.</p>
      <h2>Streams you can subscribe to</h2>
      {!producer ? <p class="muted">This workspace does not receive through this integration, so its producer's streams cannot be listed.</p> : (
        <table class="list" data-testid="catalog">
          <thead><tr><th>Stream</th><th>Event types</th><th /></tr></thead>
          <tbody>
            {catalog.length === 0 && <tr><td colSpan={3} class="muted">The producer publishes no stream.</td></tr>}
            {catalog.map((c) => (
              <tr key={c.publicId} data-stream={c.key}>
                <td>{c.name} <span class="muted">{c.description}</span></td>
                <td>{c.eventTypes.join(', ') || '—'}</td>
                <td>{subscribed.has(c.publicId) ? <span class="muted">subscribed</span>
                  : <ActionButton label="Subscribe" kind="primary" disabled={!canWrite} run={async () => { await post(base, { catalogEntryPublicId: c.publicId }); await reload(); }} />}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

function RouteCell(props: { tenant: string; queue: string; targets: string[]; routes: Route[]; canWrite: boolean; reload: () => Promise<void> }) {
  const routed = props.routes.filter((r) => r.queue === props.queue).map((r) => r.target);
  const free = props.targets.filter((x) => !routed.includes(x));
  const [pick, setPick] = useState('');
  const chosen = pick || free[0] || '';
  return (
    <div>
      {routed.join(', ') || <span class="muted">nothing</span>}
      {free.length > 0 && (
        <div class="row">
          <label class="sr-only" for={`rt-${props.queue}`}>Target for {props.queue}</label>
          <select id={`rt-${props.queue}`} value={chosen} disabled={!props.canWrite} onChange={(e) => setPick(val(e))}>
            {free.map((x) => <option key={x} value={x}>{x}</option>)}
          </select>
          <ActionButton label="Route" disabled={!props.canWrite} run={async () => { await put(`/v1/tenants/${seg(props.tenant)}/queues/${seg(props.queue)}/targets/${seg(chosen)}`); setPick(''); await props.reload(); }} />
        </div>
      )}
    </div>
  );
}
