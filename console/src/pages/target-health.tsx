import { useEffect, useState } from 'preact/hooks';
import { get, post, seg } from '../api';
import type { RedeliveryJob, TargetHealth, TargetHealthList } from '../types';
import { ActionButton, Badge, ErrorLine, Field, val, when } from '../ui';

/** How often health and a running job are read again while the page is open. */
const POLL_MS = 3_000;

/**
 * The workspace's target health (GET /v1/tenants/{t}/target-health), read
 * again every few seconds while shown; `bump()` reads it at once (after an action).
 */
export function useTargetHealth(tenant: string, query = ''): { health: TargetHealthList | null; error: unknown; bump: () => void } {
  const [health, setHealth] = useState<TargetHealthList | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    const load = () => get<TargetHealthList>(`/v1/tenants/${seg(tenant)}/target-health${query}`).then(
      (h) => { if (live) { setHealth(h); setError(null); } },
      (err) => { if (live) setError(err); },
    );
    void load();
    const timer = setInterval(() => void load(), POLL_MS);
    return () => { live = false; clearInterval(timer); };
  }, [tenant, query, tick]);
  return { health, error, bump: () => setTick((n) => n + 1) };
}

/** A success rate as people read it: "98.5 %", or "—" without attempts. */
export function rate(h: TargetHealth): string {
  if (h.successRate === null) return '—';
  const pct = h.successRate * 100;
  return `${pct === 100 || pct === 0 ? pct.toFixed(0) : pct.toFixed(1)} %`;
}

/** One line saying why a target is not healthy, and what happens next. */
export function healthLine(h: TargetHealth): string {
  if (h.state === 'disabled') return `disabled ${when(h.disabledAt)}${h.disabledReason ? `: ${h.disabledReason}` : ''}`;
  if (h.state === 'warning') return `failing since ${when(h.failingSince)}; disabled at ${when(h.disablesAt)} unless an attempt succeeds`;
  if (h.state === 'failing') return `failing since ${when(h.failingSince)} (${h.consecutiveFailures} failed in a row)`;
  return 'active';
}

/** A target's state as a badge, with what the state means on hover. */
export function HealthBadge(props: { health: TargetHealth | undefined }) {
  if (!props.health) return <Badge value="active" />;
  return <Badge value={props.health.state} title={healthLine(props.health)} />;
}

/**
 * Replay what a target missed (POST …/targets/{name}/replay): from a time
 * (by default when its trouble began), with the job's progress polled and a
 * Cancel button while it runs.
 */
export function ReplayPanel(props: { tenant: string; target: string; since: string | null; canWrite: boolean }) {
  const t = props.tenant;
  const [since, setSince] = useState(() => localInput(props.since ?? new Date(Date.now() - 3_600_000).toISOString()));
  const [job, setJob] = useState<RedeliveryJob | null>(null);
  const [error, setError] = useState<unknown>(null);
  // Set while a cancel is answered: the job row already says cancelled, but the batch being handed over is not
  // counted yet; polling then would show a count that is about to grow. The cancel's answer has the final one.
  const [cancelling, setCancelling] = useState(false);
  useEffect(() => {
    if (!job || job.status !== 'running' || cancelling) return;
    const timer = setInterval(() => {
      get<RedeliveryJob>(`/v1/tenants/${seg(t)}/redelivery-jobs/${seg(job.jobId)}`).then(setJob, setError);
    }, 1_000);
    return () => clearInterval(timer);
  }, [job?.jobId, job?.status, cancelling]);
  const cancel = async (jobId: string) => {
    setCancelling(true);
    try {
      setJob(await post<RedeliveryJob>(`/v1/tenants/${seg(t)}/redelivery-jobs/${seg(jobId)}/cancel`));
    } finally {
      setCancelling(false);
    }
  };
  const start = async () => {
    setError(null);
    const iso = new Date(since).toISOString();
    const started = await post<{ jobId: string }>(`/v1/tenants/${seg(t)}/targets/${seg(props.target)}/replay`, { since: iso });
    setJob(await get<RedeliveryJob>(`/v1/tenants/${seg(t)}/redelivery-jobs/${seg(started.jobId)}`));
  };
  return (
    <div class="card" data-testid={`replay-${props.target}`}>
      <h3>Replay what {props.target} missed</h3>
      <p class="muted">
        Sends again every delivery it did not acknowledge (failed, or blocked while disabled) of events received since the time
        below, once each; the events of one partition key in the order they were received. Nothing it acknowledged is sent again.
      </p>
      <div class="row">
        <Field label="Since" id={`replay-since-${props.target}`}>
          <input id={`replay-since-${props.target}`} type="datetime-local" step="1" value={since} disabled={!props.canWrite} onInput={(e) => setSince(val(e))} />
        </Field>
        <ActionButton label="Replay" kind="primary" testid="replay-start" disabled={!props.canWrite || job?.status === 'running'} run={start} />
      </div>
      <ErrorLine error={error} />
      {job && (
        <p data-testid="replay-progress">
          <Badge value={job.status} /> {job.done} of {job.total} handed to delivery again
          {job.failed > 0 ? `, ${job.failed} no longer in the event log` : ''}
          {job.status === 'running' && cancelling && '; cancelling: the batch being handed over finishes first'}
          {job.status === 'cancelled' && `; ${notSent(job)} (replay again to send them)`}
          {job.status === 'failed' && job.error ? `; stopped: ${job.error}` : ''}
          {job.status === 'running' && (
            <> <ActionButton label="Cancel" kind="danger" testid="replay-cancel" disabled={!props.canWrite} run={() => cancel(job.jobId)} /></>
          )}
        </p>
      )}
    </div>
  );
}

/** What a cancelled job left unsent (neither handed over nor found gone), as a clause. */
function notSent(job: RedeliveryJob): string {
  const n = Math.max(0, job.total - job.done - job.failed);
  return n === 1 ? 'the other delivery was not sent' : `the other ${n} were not sent`;
}

/** An ISO time as a datetime-local input's value (local time, to the second). */
function localInput(iso: string): string {
  const d = new Date(iso);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}
