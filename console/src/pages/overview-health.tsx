import { href } from '../route';
import { ErrorLine, when } from '../ui';
import { HealthBadge, healthLine, rate, useTargetHealth } from './target-health';

/**
 * The overview's list of the workspace's unhealthy targets (failing, warning,
 * disabled), worst first, read again every few seconds; each links to the
 * Targets page, where it is re-enabled and replayed.
 */
export function UnhealthyTargets(props: { tenant: string }) {
  const t = props.tenant;
  const { health, error } = useTargetHealth(t, '?state=failing,warning,disabled');
  if (error) return <ErrorLine error={error} />;
  if (!health) return null;
  const order = { disabled: 0, warning: 1, failing: 2, active: 3 };
  const items = [...health.items].sort((a, b) => order[a.state] - order[b.state] || a.target.localeCompare(b.target));
  return (
    <section class="card" data-testid="unhealthy-targets">
      <h2>Target health</h2>
      {items.length === 0 ? (
        <p class="muted" data-testid="targets-healthy">Every target is delivering: none is failing or disabled.</p>
      ) : (
        <table class="list">
          <thead><tr><th>Target</th><th>State</th><th>Since</th><th>Last error</th><th>Success (1 h)</th></tr></thead>
          <tbody>
            {items.map((h) => (
              <tr key={h.target} data-unhealthy={h.target} data-state={h.state}>
                <td><a href={href(['w', t, 'targets'])}>{h.target}</a></td>
                <td><HealthBadge health={h} /></td>
                <td title={healthLine(h)}>{when(h.state === 'disabled' ? h.disabledAt : h.failingSince)}</td>
                <td class="wrap">{h.lastError ?? '—'}</td>
                <td>{rate(h)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
