import { useState } from 'preact/hooks';
import { api, post, seg } from '../api';
import { href, type Route } from '../route';
import { SignIn } from './sign-in';
import type { Session } from '../types';
import { ErrorLine, Field, SecretOnce, val } from '../ui';

interface Accepted {
  integrationPublicId: string;
  status: string;
  receivingTenantPublicId: string;
  licensePublicId: string;
  buildKey?: string;
}

/**
 * The page an invite link opens (`#/accept/int_…?token=…&producer=ten_…`):
 * accept onto a new free account, or onto a workspace the signed-in user
 * administers. The token sits after '#', so it never reaches a server log.
 */
export function AcceptPage(props: { route: Route; session: Session | null; onSignedIn: () => Promise<void> }) {
  const integration = props.route.path[1] ?? '';
  const token = props.route.query.get('token') ?? '';
  const producer = props.route.query.get('producer') ?? '';
  const writable = props.session?.workspaces.filter((w) => w.role !== 'Member') ?? [];
  const [picked, setInto] = useState('');
  // The session may arrive after the first render (signing in on this page): default at render time.
  const into = picked || writable[0]?.tenantPublicId || '';
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [done, setDone] = useState<Accepted | null>(null);

  const accept = async (onto: 'new' | 'existing') => {
    setBusy(true);
    setError(null);
    try {
      const body: Record<string, string> = { inviteToken: token };
      if (onto === 'existing') {
        if (props.session?.licensePublicId) body.licensePublicId = props.session.licensePublicId;
        body.receivingTenantPublicId = into;
      }
      const res = await post<Accepted>(`/waas/integrations/${seg(integration)}/accept`, body);
      // The token is spent: take it out of the address bar and the history entry.
      history.replaceState(null, '', `${location.pathname}#/accept/${encodeURIComponent(integration)}`);
      if (res.buildKey && !props.session) {
        // A new free account: its Build key signs this browser in once, then is only shown.
        await api('POST', '/console/api/session', { licensePublicId: res.licensePublicId, key: res.buildKey });
      }
      setDone(res);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  const partnerLink = (a: Accepted) => href(['w', a.receivingTenantPublicId, 'partner', a.integrationPublicId], { producer: producer || undefined });
  if (done) {
    return (
      <section class="card narrow" data-testid="accepted">
        <h1>Invitation accepted</h1>
        <p>Integration <code>{done.integrationPublicId}</code> is {done.status}. Events arrive in workspace <code>{done.receivingTenantPublicId}</code> (license <code>{done.licensePublicId}</code>).</p>
        {done.buildKey && <SecretOnce label="Your new account's Build key" value={done.buildKey} onDone={() => undefined} />}
        <p>
          <a class="button primary" href={partnerLink(done)} onClick={(e) => { e.preventDefault(); void props.onSignedIn().then(() => { location.hash = partnerLink(done); }); }}>
            Go to your subscriptions
          </a>
        </p>
      </section>
    );
  }
  if (!integration || !token) {
    return <section class="card narrow"><h1>Accept invitation</h1><p class="error" role="alert">This invitation link is incomplete: ask the producer for a new one.</p></section>;
  }
  return (
    <section class="card narrow" data-testid="accept">
      <h1>Accept invitation</h1>
      <p>You were invited to receive a producer's streams (integration <code>{integration}</code>{producer ? <> from workspace <code>{producer}</code></> : null}).</p>
      {props.session && writable.length > 0 && (
        <div class="card">
          <h2>Onto your account</h2>
          <Field label="Receiving workspace" id="accept-into">
            <select id="accept-into" value={into} onChange={(e) => setInto(val(e))}>
              {writable.map((w) => <option key={w.tenantPublicId} value={w.tenantPublicId}>{w.name} ({w.tenantPublicId})</option>)}
            </select>
          </Field>
          <button class="primary" type="button" disabled={busy} onClick={() => void accept('existing')}>Accept invitation</button>
        </div>
      )}
      {!props.session && (
        <div class="card">
          <h2>Onto a new free account</h2>
          <p class="muted">A license and a receiving workspace are created for the invited address; its Build key is shown once.</p>
          <button class="primary" type="button" disabled={busy} onClick={() => void accept('new')}>Accept invitation</button>
        </div>
      )}
      {!props.session && (
        <details class="card">
          <summary>Accept onto an account you already have: sign in first</summary>
          <SignIn oidc={false} notice={null} onSignedIn={() => void props.onSignedIn()} />
        </details>
      )}
      <ErrorLine error={error} />
    </section>
  );
}
