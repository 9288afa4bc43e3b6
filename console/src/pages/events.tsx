import { useEffect, useState } from 'preact/hooks';
import { get, post, seg } from '../api';
import { href, navigate } from '../route';
import { useCanWrite } from '../session';
import type { EventListItem, Items, Target } from '../types';
import { ActionButton, Badge, ErrorLine, Field, Loading, val, when } from '../ui';

const STATUSES = ['pending', 'delivered', 'retrying', 'failed', 'blocked'] as const;
const FILTERS = ['status', 'target', 'from', 'to', 'eventType', 'partitionKey'] as const;

/** <input type=datetime-local> value (local time) ↔ ISO-8601 UTC. */
const toIso = (local: string) => (local ? new Date(local).toISOString() : '');
const toLocal = (iso: string) => {
  if (!iso) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`;
};

/** The recent events of a queue, newest first, filtered, one page at a time. */
export function EventsPage(props: { tenant: string; queue: string; query: URLSearchParams }) {
  const t = props.tenant;
  const q = props.query;
  const [page, setPage] = useState<{ items: EventListItem[]; nextCursor: string | null } | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [targets, setTargets] = useState<string[]>([]);
  const [draft, setDraft] = useState<Record<string, string>>(() => Object.fromEntries(FILTERS.map((f) => [f, q.get(f) ?? ''])));
  const key = q.toString();

  useEffect(() => {
    setPage(null);
    setError(null);
    setDraft(Object.fromEntries(FILTERS.map((f) => [f, q.get(f) ?? ''])));
    const params = new URLSearchParams();
    for (const f of [...FILTERS, 'cursor']) if (q.get(f)) params.set(f, q.get(f)!);
    params.set('limit', '50');
    get<{ items: EventListItem[]; nextCursor: string | null }>(`/v1/tenants/${seg(t)}/queues/${seg(props.queue)}/events?${params}`).then(setPage, setError);
  }, [t, props.queue, key]);
  useEffect(() => {
    get<Items<Target>>(`/v1/tenants/${seg(t)}/targets`).then((r) => setTargets(r.items.map((x) => x.name)), () => setTargets([]));
  }, [t]);

  const apply = (e: Event) => {
    e.preventDefault();
    navigate(['w', t, 'queues', props.queue, 'events'], draft);
  };
  const filterQuery = Object.fromEntries(FILTERS.map((f) => [f, q.get(f) ?? undefined]));

  return (
    <section>
      <p class="crumbs"><a href={href([])}>Home</a> / <a href={href(['w', t, 'queues'])}>workspace</a> / queue {props.queue}</p>
      <h1>Events of <code>{props.queue}</code></h1>
      <form class="card filters" onSubmit={apply} data-testid="event-filters">
        <div class="grid">
          <Field label="Status" id="f-status">
            <select id="f-status" value={draft.status} onChange={(e) => setDraft({ ...draft, status: val(e) })}>
              <option value="">any</option>
              {STATUSES.map((s) => <option key={s} value={s}>{s}</option>)}
            </select>
          </Field>
          <Field label="Target" id="f-target">
            <select id="f-target" value={draft.target} onChange={(e) => setDraft({ ...draft, target: val(e) })}>
              <option value="">any</option>
              {targets.map((x) => <option key={x} value={x}>{x}</option>)}
            </select>
          </Field>
          <Field label="From" id="f-from">
            <input id="f-from" type="datetime-local" value={toLocal(draft.from ?? '')} onInput={(e) => setDraft({ ...draft, from: toIso(val(e)) })} />
          </Field>
          <Field label="To" id="f-to">
            <input id="f-to" type="datetime-local" value={toLocal(draft.to ?? '')} onInput={(e) => setDraft({ ...draft, to: toIso(val(e)) })} />
          </Field>
          <Field label="Event type" id="f-eventType">
            <input id="f-eventType" value={draft.eventType} onInput={(e) => setDraft({ ...draft, eventType: val(e) })} />
          </Field>
          <Field label="Partition key" id="f-partitionKey">
            <input id="f-partitionKey" value={draft.partitionKey} onInput={(e) => setDraft({ ...draft, partitionKey: val(e) })} />
          </Field>
        </div>
        <div class="row">
          <button class="primary" type="submit">Filter</button>
          <a class="button" href={href(['w', t, 'queues', props.queue, 'events'])}>Clear</a>
        </div>
      </form>
      <BulkRedeliver tenant={t} targets={targets} initialTarget={q.get('target') ?? ''} from={q.get('from') ?? ''} to={q.get('to') ?? ''} />
      {error ? <ErrorLine error={error} /> : !page ? <Loading /> : (
        <>
          <table class="list" data-testid="events">
            <thead><tr><th>Event ID</th><th>Received</th><th>Type</th><th>Partition key</th><th>Deliveries</th></tr></thead>
            <tbody>
              {page.items.length === 0 && <tr><td colSpan={5} class="muted">No events match.</td></tr>}
              {page.items.map((ev) => (
                <tr key={ev.eventId} data-event={ev.eventId}>
                  <td><a href={href(['w', t, 'events', ev.eventId])}><code>{ev.eventId}</code></a></td>
                  <td data-label="Received">{when(ev.receivedAt)}</td>
                  <td data-label="Type">{ev.eventType ?? '—'}</td>
                  <td data-label="Partition key">{ev.partitionKey ?? '—'}</td>
                  <td>
                    {ev.targets.map((d) => (
                      <span class="delivery" key={d.target}>
                        {d.target}: <Badge value={d.status} title={`${d.attempts} attempt(s)${d.lastStatus ? `, last HTTP ${d.lastStatus}` : ''}`} />
                      </span>
                    ))}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          <div class="row">
            {q.get('cursor') && <a class="button" href={href(['w', t, 'queues', props.queue, 'events'], filterQuery)}>First page</a>}
            {page.nextCursor && <a class="button" href={href(['w', t, 'queues', props.queue, 'events'], { ...filterQuery, cursor: page.nextCursor })}>Next page</a>}
          </div>
        </>
      )}
    </section>
  );
}

interface Job {
  jobId: string;
  status: 'running' | 'done' | 'failed';
  total: number;
  done: number;
  failed: number;
}

/** Redeliver every failed delivery of a target in a time range: count first, then confirm, then follow the job. */
function BulkRedeliver(props: { tenant: string; targets: string[]; initialTarget: string; from: string; to: string }) {
  const canWrite = useCanWrite(props.tenant);
  const [target, setTarget] = useState(props.initialTarget);
  const [from, setFrom] = useState(props.from || new Date(Date.now() - 24 * 3600_000).toISOString());
  const [to, setTo] = useState(props.to || new Date(Date.now() + 60_000).toISOString());
  const [count, setCount] = useState<number | null>(null);
  const [job, setJob] = useState<Job | null>(null);
  const [error, setError] = useState<unknown>(null);
  const chosen = target || props.targets[0] || '';
  const path = `/v1/tenants/${seg(props.tenant)}/targets/${seg(chosen)}/redeliveries`;

  useEffect(() => setCount(null), [chosen, from, to]);
  useEffect(() => {
    if (!job || job.status !== 'running') return undefined;
    const timer = setTimeout(() => {
      get<Job>(`/v1/tenants/${seg(props.tenant)}/redelivery-jobs/${seg(job.jobId)}`).then(setJob, setError);
    }, 1000);
    return () => clearTimeout(timer);
  }, [job]);

  return (
    <div class="card" data-testid="bulk-redeliver">
      <h2>Redeliver failed</h2>
      <fieldset disabled={!canWrite}>
        <div class="grid">
          <Field label="Target" id="b-target">
            <select id="b-target" value={chosen} onChange={(e) => setTarget(val(e))}>
              {props.targets.map((x) => <option key={x} value={x}>{x}</option>)}
            </select>
          </Field>
          <Field label="From" id="b-from"><input id="b-from" type="datetime-local" value={toLocal(from)} onInput={(e) => setFrom(toIso(val(e)))} /></Field>
          <Field label="To" id="b-to"><input id="b-to" type="datetime-local" value={toLocal(to)} onInput={(e) => setTo(toIso(val(e)))} /></Field>
        </div>
        <div class="row">
          <ActionButton label="Count failed deliveries" disabled={!chosen} run={async () => {
            setError(null);
            setJob(null);
            setCount((await post<{ count: number }>(path, { from, to, dryRun: true })).count);
          }} />
          {count !== null && (
            <>
              <span data-testid="bulk-count">{count} failed deliver{count === 1 ? 'y' : 'ies'} of {chosen} in this range.</span>
              <ActionButton label={`Redeliver failed (${count})`} kind="primary" testid="bulk-confirm" disabled={count === 0} run={async () => {
                setJob(await post<Job>(path, { from, to }));
                setCount(null);
              }} />
            </>
          )}
        </div>
        {job && (
          <p role="status" data-testid="bulk-job">
            Job <code>{job.jobId}</code>: <Badge value={job.status} /> {job.done ?? 0} of {job.total} redelivered{job.failed ? `, ${job.failed} failed` : ''}.
          </p>
        )}
        <ErrorLine error={error} />
      </fieldset>
    </div>
  );
}
