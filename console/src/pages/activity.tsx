import { useEffect, useState } from 'preact/hooks';
import { get, seg } from '../api';
import type { ActivityEntry } from '../types';
import { ErrorLine, Loading, when } from '../ui';

/** What each kind of entry reads as. */
const WORDS: Record<string, string> = {
  'workspace.created': 'Workspace created',
  'key.created': 'API key created',
  'key.revoked': 'API key revoked',
  'queue.closed': 'Queue closed',
  'queue.opened': 'Queue opened',
  'queue.archived': 'Queue archived',
  'queue.restored': 'Queue restored',
  'target.warned': 'Target failing: disabling announced',
  'target.disabled': 'Target disabled',
  'target.enabled': 'Target re-enabled',
  'redelivery.started': 'Redelivery started',
  'redelivery.cancelled': 'Redelivery cancelled',
  'redelivery.finished': 'Redelivery finished',
  'replay.started': 'Replay started',
  'replay.cancelled': 'Replay cancelled',
  'replay.finished': 'Replay finished',
};

/** The workspace's activity feed (GET /v1/tenants/{t}/activity), newest first, 50 at a time. */
export function ActivityPage(props: { tenant: string }) {
  const t = props.tenant;
  const [items, setItems] = useState<ActivityEntry[] | null>(null);
  const [next, setNext] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const load = async (cursor: string | null) => {
    try {
      const page = await get<{ items: ActivityEntry[]; nextCursor: string | null }>(`/v1/tenants/${seg(t)}/activity${cursor ? `?cursor=${seg(cursor)}` : ''}`);
      setItems((prev) => (cursor && prev ? [...prev, ...page.items] : page.items));
      setNext(page.nextCursor);
      setError(null);
    } catch (err) {
      setError(err);
    }
  };
  useEffect(() => void load(null), [t]);
  if (error) return <ErrorLine error={error} />;
  if (!items) return <Loading />;
  return (
    <div>
      <table class="list" data-testid="activity">
        <thead><tr><th>When</th><th>What</th><th>On</th><th>Who</th><th>Detail</th></tr></thead>
        <tbody>
          {items.length === 0 && <tr><td colSpan={5} class="muted">Nothing has happened in this workspace yet.</td></tr>}
          {items.map((e) => (
            <tr key={e.id} data-kind={e.kind}>
              <td>{when(e.at)}</td>
              <td>{WORDS[e.kind] ?? e.kind}</td>
              <td><code>{e.subject ?? '—'}</code></td>
              <td>{e.actor === 'delivery' ? 'delivery (automatic)' : e.actor === 'job' ? 'the job' : e.actor.replace(/^(key|user):/, '')}</td>
              <td class="wrap">{e.detail ?? ''}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {next && <p><button type="button" onClick={() => void load(next)}>Older entries</button></p>}
    </div>
  );
}
