import { useEffect, useState } from 'preact/hooks';
import { get, post, seg } from '../api';
import { href } from '../route';
import { useCanWrite } from '../session';
import type { EventDetail } from '../types';
import { ActionButton, Badge, ErrorLine, Loading, when } from '../ui';
import { bodyPreview } from '../body-preview';

function headerPairs(h: EventDetail['headers']): Array<[string, string]> {
  if (!h) return [];
  if (Array.isArray(h)) return h.map((x) => (Array.isArray(x) ? [String(x[0]), String(x[1])] : [x.name, x.value]));
  return Object.entries(h).map(([k, v]) => [k, String(v)]);
}

function bodyBytes(ev: EventDetail): Uint8Array | null {
  const b64 = ev.bodyBase64 ?? (ev.bodyEncoding === 'base64' ? ev.body : null);
  if (typeof b64 === 'string') return Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
  if (typeof ev.body === 'string') return new TextEncoder().encode(ev.body);
  return null;
}

/** One event: its keys, headers, body preview, deliveries and attempts; redeliver. */
export function EventPage(props: { tenant: string; eventId: string }) {
  const t = props.tenant;
  const canWrite = useCanWrite(t);
  const [ev, setEv] = useState<EventDetail | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [note, setNote] = useState<string | null>(null);
  const load = () => get<EventDetail>(`/v1/tenants/${seg(t)}/events/${seg(props.eventId)}`).then(setEv, setError);
  useEffect(() => void load(), [t, props.eventId]);
  if (error) return <ErrorLine error={error} />;
  if (!ev) return <Loading />;
  const bytes = bodyBytes(ev);
  const preview = bytes ? bodyPreview(bytes) : null;
  const redeliver = async (target?: string) => {
    await post(`/v1/tenants/${seg(t)}/events/${seg(ev.eventId)}/redeliver`, target ? { target } : {});
    setNote(`Redelivery requested${target ? ` to ${target}` : ''}: same X-Service-Event-Id.`);
    await load();
  };
  return (
    <section>
      <p class="crumbs"><a href={href([])}>Home</a> / <a href={href(['w', t, 'queues'])}>workspace</a> / <a href={href(['w', t, 'queues', ev.queue, 'events'])}>{ev.queue}</a> / event</p>
      <h1>Event <code data-testid="event-id">{ev.eventId}</code></h1>
      <dl class="facts">
        <dt>Queue</dt><dd>{ev.queue}</dd>
        <dt>Received</dt><dd>{when(ev.receivedAt)}</dd>
        <dt>Event type</dt><dd>{ev.eventType ?? '—'}</dd>
        <dt>Group key</dt><dd>{ev.groupKey ?? '—'}</dd>
        <dt>Partition key</dt><dd>{ev.partitionKey ?? '—'}</dd>
        <dt>Idempotency-Key</dt><dd>{ev.idempotencyKey ?? '—'}</dd>
      </dl>
      <p>
        <ActionButton label="Redeliver" kind="primary" disabled={!canWrite} run={() => redeliver()} />
        {note && <span class="ok" role="status"> {note}</span>}
      </p>
      <h2>Headers</h2>
      {headerPairs(ev.headers).length === 0 ? <p class="muted">No headers recorded.</p> : (
        <table class="list"><tbody>{headerPairs(ev.headers).map(([k, v]) => <tr key={k}><th>{k}</th><td class="wrap"><code>{v}</code></td></tr>)}</tbody></table>
      )}
      <h2>Body {preview && <span class="muted">({preview.kind === 'json' ? 'JSON' : preview.kind === 'hex' ? 'binary, hex' : 'text'}, {bytes!.length} bytes)</span>}</h2>
      {preview ? <pre class="body" data-testid="event-body">{preview.text}</pre> : <p class="muted">No body recorded.</p>}
      <h2>Deliveries</h2>
      {ev.deliveries.length === 0 && <p class="muted">Routed to no target.</p>}
      {ev.deliveries.map((d) => (
        <div class="card" key={d.targetPublicId ?? d.target ?? 'gone'} data-delivery={d.target ?? ''}>
          <h3>{d.target ?? 'deleted target'} <Badge value={d.status} /></h3>
          {d.target && <ActionButton label={`Redeliver to ${d.target}`} disabled={!canWrite} run={() => redeliver(d.target!)} />}
          <table class="list">
            <thead><tr><th>Time</th><th>Status</th><th>Duration</th><th>Error</th></tr></thead>
            <tbody>
              {d.attempts.length === 0 && <tr><td colSpan={4} class="muted">No attempt yet.</td></tr>}
              {d.attempts.map((a, i) => (
                <tr key={i}><td data-label="Time">{when(a.at)}</td><td data-label="Status">{a.status ?? '—'}</td><td data-label="Duration">{a.durationMs != null ? `${a.durationMs} ms` : '—'}</td><td class="wrap" data-label="Error">{a.error ?? ''}</td></tr>
              ))}
            </tbody>
          </table>
        </div>
      ))}
    </section>
  );
}
