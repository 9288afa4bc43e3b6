import { useEffect, useState } from 'preact/hooks';
import { api, get, seg } from '../api';
import { href } from '../route';
import type { EventDetail, Items, Queue } from '../types';
import { Badge, ErrorLine, Field, val, when } from '../ui';

interface Run {
  runId: string;
  events: EventDetail[];
}

/**
 * Sandbox (docs/api.md#sandbox): post a test event to the sandbox route with
 * sb_fail_code / sb_fail_count, then watch the run's simulated attempts.
 * Ingress takes an ingress credential, not the console session: the key typed
 * here goes in that one request's X-Api-Key header and the field is cleared.
 */
export function SandboxPage(props: { tenant: string; run: string }) {
  const t = props.tenant;
  const [queues, setQueues] = useState<string[]>([]);
  const [form, setForm] = useState({ queue: '', body: '{"hello":"sandbox"}', failCode: '500', failCount: '2', key: '' });
  const [runId, setRunId] = useState(props.run);
  const [run, setRun] = useState<Run | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [runError, setRunError] = useState<unknown>(null);
  const queue = form.queue || queues[0] || '';

  useEffect(() => {
    get<Items<Queue>>(`/v1/tenants/${seg(t)}/queues`).then((r) => setQueues(r.items.filter((q) => !q.archived && q.authMode === 'api_key').map((q) => q.name)), setError);
  }, [t]);
  useEffect(() => {
    if (!runId) return undefined;
    let stop = false;
    const poll = async () => {
      try {
        setRun(await get<Run>(`/v1/tenants/${seg(t)}/sandbox/runs/${seg(runId)}`));
        setRunError(null);
      } catch (err) {
        setRunError(err);
      }
      if (!stop) timer = setTimeout(poll, 1000);
    };
    let timer = setTimeout(poll, 0);
    return () => {
      stop = true;
      clearTimeout(timer);
    };
  }, [t, runId]);

  const send = async (e: Event) => {
    e.preventDefault();
    setError(null);
    const key = form.key;
    setForm({ ...form, key: '' });
    const id = runId || `run-${Date.now().toString(36)}`;
    const q = new URLSearchParams({ runId: id });
    if (form.failCode) q.set('sb_fail_code', form.failCode);
    if (form.failCount) q.set('sb_fail_count', form.failCount);
    try {
      await api('POST', `/events/sandbox/${seg(t)}/${seg(queue)}?${q}`, form.body, { quiet401: true, headers: { 'x-api-key': key.trim() } });
      setRunId(id);
    } catch (err) {
      setError(err);
    }
  };

  return (
    <section>
      <p class="crumbs"><a href={href([])}>Home</a> / <a href={href(['w', t])}>workspace</a> / sandbox</p>
      <h1>Sandbox</h1>
      <form class="card" onSubmit={send} data-testid="sandbox-form" autocomplete="off">
        <h2>Send a test event</h2>
        <p class="muted">Accepted and stored like production; deliveries are simulated, nothing leaves the service.</p>
        <div class="grid">
          <Field label="Queue" id="sb-queue">
            <select id="sb-queue" value={queue} onChange={(e) => setForm({ ...form, queue: val(e) })}>
              {queues.map((x) => <option key={x} value={x}>{x}</option>)}
            </select>
          </Field>
          <Field label="sb_fail_code" id="sb-code" hint="HTTP status the simulated delivery fails with">
            <input id="sb-code" type="number" min={100} max={599} value={form.failCode} onInput={(e) => setForm({ ...form, failCode: val(e) })} />
          </Field>
          <Field label="sb_fail_count" id="sb-count" hint="Fail the first N attempts, then succeed">
            <input id="sb-count" type="number" min={0} max={1000} value={form.failCount} onInput={(e) => setForm({ ...form, failCount: val(e) })} />
          </Field>
          <Field label="Ingress API key" id="sb-key" hint="Used for this one request, then cleared; never stored.">
            <input id="sb-key" type="password" required autocomplete="off" value={form.key} onInput={(e) => setForm({ ...form, key: val(e) })} />
          </Field>
        </div>
        <Field label="Body" id="sb-body">
          <textarea id="sb-body" rows={3} value={form.body} onInput={(e) => setForm({ ...form, body: val(e) })} />
        </Field>
        <ErrorLine error={error} />
        <button class="primary" type="submit" disabled={!queue}>Send test event</button>
      </form>
      <div class="card">
        <h2>Run</h2>
        <Field label="Run ID" id="sb-run"><input id="sb-run" value={runId} onChange={(e) => setRunId(val(e))} /></Field>
        {runError ? <ErrorLine error={runError} /> : null}
        {run?.events.map((ev) => (
          <div key={ev.eventId} data-run-event={ev.eventId}>
            <h3><a href={href(['w', t, 'events', ev.eventId])}><code>{ev.eventId}</code></a></h3>
            {ev.deliveries.map((d) => (
              <table class="list" key={d.targetPublicId ?? d.target ?? ''}>
                <caption>{d.target} <Badge value={d.status} /></caption>
                <thead><tr><th>Time</th><th>Status</th><th>Duration</th><th>Error</th></tr></thead>
                <tbody>
                  {d.attempts.length === 0 && <tr><td colSpan={4} class="muted">No attempt yet.</td></tr>}
                  {d.attempts.map((a, i) => <tr key={i}><td>{when(a.at)}</td><td>{a.status ?? '—'}</td><td>{a.durationMs != null ? `${a.durationMs} ms` : '—'}</td><td>{a.error ?? ''}</td></tr>)}
                </tbody>
              </table>
            ))}
          </div>
        ))}
      </div>
    </section>
  );
}
