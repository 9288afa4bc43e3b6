import { useState } from 'preact/hooks';
import { ApiError, api } from '../api';
import type { Session } from '../types';
import { ErrorLine, Field, val } from '../ui';

/**
 * License id + API key, exchanged once for a session cookie. The key lives
 * only in this form's input while it is typed; it is cleared whatever the answer.
 */
export function SignIn(props: { oidc: boolean; notice: string | null; onSignedIn: (s: Session) => void }) {
  const [license, setLicense] = useState('');
  const [key, setKey] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    const typed = key;
    setKey('');
    try {
      const session = await api<Session>('POST', '/console/api/session', { licensePublicId: license.trim(), key: typed.trim() }, { quiet401: true });
      props.onSignedIn(session);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  const fieldError = (f: string) => (error instanceof ApiError ? error.forField(f) : undefined);

  return (
    <section class="card narrow">
      <h1>Sign in</h1>
      {props.notice && <p class="notice" role="status" data-testid="signin-notice">{props.notice}</p>}
      {props.oidc && (
        <p>
          <a class="button primary" href="/console/auth/oidc/start">Sign in with your identity provider</a>
        </p>
      )}
      <form onSubmit={submit} autocomplete="off">
        <Field label="License ID" id="license" error={fieldError('licensePublicId')}>
          <input id="license" name="license" required placeholder="lic_…" value={license} onInput={(e) => setLicense(val(e))} spellcheck={false} />
        </Field>
        <Field label="API key" id="apikey" error={fieldError('key')} hint="A Build or Full access key (qak_…). It is exchanged once for a session and not kept in the browser.">
          <input id="apikey" name="apikey" type="password" required autocomplete="off" placeholder="qak_…" value={key} onInput={(e) => setKey(val(e))} />
        </Field>
        <ErrorLine error={error} />
        <button class="primary" type="submit" disabled={busy}>Sign in</button>
      </form>
    </section>
  );
}
