import { useEffect, useState } from 'preact/hooks';
import { get, seg } from '../api';
import { href } from '../route';
import type { AttemptClass, Items, Queue, Stats, StatsSeries, StatsWindow } from '../types';
import { ErrorLine, Loading, val } from '../ui';
import { LineChart } from './overview-chart';
import { UnhealthyTargets } from './overview-health';
import './overview.css';

/** How often the overview asks again: the rollups behind it are flushed about every second. */
export const POLL_MS = 5_000;
const WINDOWS: StatsWindow[] = ['1h', '24h', '7d'];
const CLASSES: Array<{ id: AttemptClass; label: string }> = [
  { id: '2xx', label: '2xx' },
  { id: '3xx', label: '3xx' },
  { id: '4xx', label: '4xx' },
  { id: '5xx', label: '5xx' },
  { id: 'timeout', label: 'timeout' },
  { id: 'network', label: 'network' },
];

/**
 * A workspace at a glance (docs/console.md#overview): accepted, delivered,
 * retrying and failed events per step, accept→deliver latency p50/p99 and
 * the attempts by outcome, in total or for one queue, over 1 h, 24 h or 7 d,
 * asked again every few seconds. With no traffic in the window it says how
 * to send a first event instead.
 */
export function OverviewPage(props: { tenant: string }) {
  const t = props.tenant;
  const [win, setWin] = useState<StatsWindow>('1h');
  const [queue, setQueue] = useState('');
  const [stats, setStats] = useState<Stats | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [queues, setQueues] = useState<Queue[] | null>(null);

  // The queues for the selector; asked again with each empty answer, so the
  // first-event hint names a queue as soon as one is made.
  const quiet = stats !== null && isQuiet(stats.total);
  useEffect(() => {
    get<Items<Queue>>(`/v1/tenants/${seg(t)}/queues`).then((r) => setQueues(r.items), () => setQueues([]));
  }, [t, quiet ? stats : null]);

  useEffect(() => {
    let live = true;
    let timer: ReturnType<typeof setTimeout> | null = null;
    const load = async () => {
      try {
        const answer = await get<Stats>(`/v1/tenants/${seg(t)}/stats?window=${win}${queue ? `&queue=${seg(queue)}` : ''}`);
        if (!live) return;
        setStats(answer);
        setError(null);
      } catch (err) {
        if (live) setError(err);
      }
      // The next poll once this one answered: a slow answer never stacks requests.
      if (live) timer = setTimeout(() => void load(), POLL_MS);
    };
    setStats(null);
    void load();
    return () => {
      live = false;
      if (timer) clearTimeout(timer);
    };
  }, [t, win, queue]);

  const names = [...new Set([...(queues ?? []).map((q) => q.name), ...(stats?.queues.map((q) => q.name) ?? [])])].sort();
  return (
    <section class="overview" data-testid="overview">
      <div class="row overview-controls">
        <div class="row" role="group" aria-label="Window">
          {WINDOWS.map((w) => (
            <button key={w} type="button" class={w === win ? 'primary' : 'plain'} aria-pressed={w === win} onClick={() => setWin(w)}>{w}</button>
          ))}
        </div>
        <label for="overview-queue">Queue</label>
        <select id="overview-queue" value={queue} onChange={(e) => setQueue(val(e))}>
          <option value="">All queues</option>
          {names.map((n) => <option key={n} value={n}>{n}</option>)}
        </select>
        <span class="muted" aria-live="polite">{stats ? `updated ${new Date().toLocaleTimeString()}` : ''}</span>
      </div>
      {/* Target health (issue 26 item 2) renders its list of unhealthy targets here. */}
      <UnhealthyTargets tenant={t} />
      <ErrorLine error={error} />
      {!stats && !error && <Loading />}
      {stats && (quiet ? <FirstEvent tenant={t} window={win} queues={queues} queue={queue} /> : <Charts stats={stats} />)}
    </section>
  );
}

function isQuiet(s: StatsSeries): boolean {
  return s.totals.accepted === 0 && s.totals.attempts.total === 0;
}

/** The empty state: no event in the window, and how to send one. */
function FirstEvent(props: { tenant: string; window: StatsWindow; queues: Queue[] | null; queue: string }) {
  const queue = props.queue || props.queues?.[0]?.name || 'QUEUE';
  const url = `${location.origin}/events/${seg(props.tenant)}/${seg(queue)}`;
  const curl = `curl -X POST '${url}' \\\n  -H 'x-api-key: YOUR_INGRESS_KEY' \\\n  -H 'content-type: application/json' \\\n  -d '{"hello":"world"}'`;
  return (
    <div class="overview-empty" data-testid="overview-empty">
      <h2>No traffic in the last {props.window}</h2>
      <p>Send a first event: it is counted here within seconds, and delivered to every target routed from its queue.</p>
      {props.queues !== null && props.queues.length === 0 && (
        <p>
          This workspace has no queue yet: <a href={href(['w', props.tenant, 'queues', 'new'])}>make one</a>, a{' '}
          <a href={href(['w', props.tenant, 'targets', 'new'])}>target</a> and a <a href={href(['w', props.tenant, 'routes'])}>route</a> between them.
        </p>
      )}
      <pre class="body" data-testid="first-event-curl">{curl}</pre>
      <p class="muted">
        An ingress key comes from <a href={href(['keys'])}>API keys</a> (profile <code>ingress</code>); the answer is <code>202</code> with the event's id.
      </p>
    </div>
  );
}

function Charts(props: { stats: Stats }) {
  const { stats } = props;
  const s = stats.total;
  const times = s.series.map((p) => Date.parse(p.t) / 1000);
  const step = stats.stepSeconds >= 3600 ? `${stats.stepSeconds / 3600} h` : `${stats.stepSeconds / 60} min`;
  const ms = (v: number | null) => (v === null ? '—' : v >= 10_000 ? `${(v / 1000).toFixed(1)} s` : `${v} ms`);
  const figures: Array<[string, string, string]> = [
    ['accepted', 'Accepted', String(s.totals.accepted)],
    ['delivered', 'Delivered', String(s.totals.delivered)],
    ['retrying', 'Retrying', String(s.totals.retrying)],
    ['failed', 'Failed', String(s.totals.failed)],
    ['p50', 'Latency p50', ms(s.totals.latencyP50Ms)],
    ['p99', 'Latency p99', ms(s.totals.latencyP99Ms)],
  ];
  return (
    <div>
      <dl class="overview-figures" data-testid="overview-figures">
        {figures.map(([id, label, value]) => (
          <div key={id} class={`figure figure-${id}`}>
            <dt>{label}</dt>
            <dd data-testid={`figure-${id}`}>{value}</dd>
          </div>
        ))}
      </dl>
      <p class="muted">Over the last {stats.window}, per {step}. Accepted counts events; delivered and failed count deliveries (an event routed to two targets is two); retrying counts attempts that will be made again.</p>
      <LineChart
        title={`Events per ${step}`}
        testid="chart-events"
        unit="events"
        times={times}
        lines={[
          { label: 'Accepted', stroke: '#2563eb', values: s.series.map((p) => p.accepted) },
          { label: 'Delivered', stroke: '#16a34a', values: s.series.map((p) => p.delivered) },
          { label: 'Retrying', stroke: '#d97706', values: s.series.map((p) => p.retrying) },
          { label: 'Failed', stroke: '#dc2626', values: s.series.map((p) => p.failed) },
        ]}
      />
      <LineChart
        title="Accept → deliver latency"
        testid="chart-latency"
        unit="ms"
        times={times}
        lines={[
          { label: 'p50', stroke: '#0891b2', values: s.series.map((p) => p.latencyP50Ms) },
          { label: 'p99', stroke: '#7c3aed', values: s.series.map((p) => p.latencyP99Ms) },
        ]}
      />
      <AttemptShares series={s} />
      {stats.queue === null && stats.queues.length > 1 && <QueueTable stats={stats} />}
    </div>
  );
}

/** The attempts by outcome as one stacked bar, each class with its share. */
function AttemptShares(props: { series: StatsSeries }) {
  const { attempts, attemptShares } = props.series.totals;
  const pct = (share: number) => `${(share * 100).toFixed(share > 0 && share < 0.001 ? 2 : 1)} %`;
  return (
    <figure class="chart" data-testid="attempt-shares">
      <figcaption>Attempts by outcome ({attempts.total})</figcaption>
      <div class="share-bar" role="img" aria-label={CLASSES.map((c) => `${c.label} ${pct(attemptShares[c.id])}`).join(', ')}>
        {CLASSES.filter((c) => attempts[c.id] > 0).map((c) => (
          <span key={c.id} class={`share share-${c.id}`} style={{ width: `${attemptShares[c.id] * 100}%` }} />
        ))}
      </div>
      <ul class="share-legend">
        {CLASSES.map((c) => (
          <li key={c.id} data-testid={`share-${c.id}`}><span class={`swatch share-${c.id}`} /> {c.label}: {pct(attemptShares[c.id])} <span class="muted">({attempts[c.id]})</span></li>
        ))}
      </ul>
    </figure>
  );
}

function QueueTable(props: { stats: Stats }) {
  return (
    <table class="list" data-testid="overview-queues">
      <thead><tr><th>Queue</th><th>Accepted</th><th>Delivered</th><th>Retrying</th><th>Failed</th><th>p50</th><th>p99</th></tr></thead>
      <tbody>
        {props.stats.queues.map((q) => (
          <tr key={q.name} data-queue={q.name}>
            <td>{q.name}</td><td>{q.totals.accepted}</td><td>{q.totals.delivered}</td><td>{q.totals.retrying}</td><td>{q.totals.failed}</td>
            <td>{q.totals.latencyP50Ms ?? '—'}</td><td>{q.totals.latencyP99Ms ?? '—'}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
