import { lazy, Suspense } from 'preact/compat';
import { useCallback, useEffect, useState } from 'preact/hooks';
import { ApiError, api, onUnauthorized } from './api';
import { href, useRoute } from './route';
import { SessionContext, SIGNIN_ERRORS, type SessionState } from './session';
import type { Session } from './types';
import { ErrorLine, Loading } from './ui';
import { SignIn } from './pages/sign-in';
import { LicenseHome } from './pages/license-home';
import { WorkspacePage } from './pages/workspace';
import { EventsPage } from './pages/events';
import { EventPage } from './pages/event-page';
import { AcceptPage } from './pages/accept';

// Producer and partner pages (and the chart library) load only when opened.
const ProducerPage = lazy(() => import('./pages/producer').then((m) => m.ProducerPage));
const PartnerPage = lazy(() => import('./pages/partner').then((m) => m.PartnerPage));
const SandboxPage = lazy(() => import('./pages/sandbox').then((m) => m.SandboxPage));

interface Config {
  oidc: boolean;
  version: string;
}

/** A `?signin_error=` the server put on /console/, read once and removed from the address bar. */
function takeSigninError(): string | null {
  const params = new URLSearchParams(location.search);
  const code = params.get('signin_error');
  if (code === null) return null;
  history.replaceState(null, '', location.pathname + location.hash);
  return SIGNIN_ERRORS[code] ?? `Sign-in failed (${code}).`;
}

export function App() {
  const [config, setConfig] = useState<Config | null>(null);
  const [session, setSession] = useState<Session | null | undefined>(undefined);
  const [notice, setNotice] = useState<string | null>(takeSigninError);
  const [loadError, setLoadError] = useState<unknown>(null);
  const route = useRoute();

  const refresh = useCallback(async () => {
    try {
      setSession(await api<Session>('GET', '/console/api/session', undefined, { quiet401: true }));
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) setSession(null);
      else setLoadError(err);
    }
  }, []);

  useEffect(() => {
    api<Config>('GET', '/console/api/config').then(setConfig, () => setConfig({ oidc: false, version: '' }));
    void refresh();
    return onUnauthorized(() => {
      setSession(null);
      setNotice(SIGNIN_ERRORS.session_expired!);
    });
  }, [refresh]);

  const signOut = useCallback(async () => {
    try {
      await api('DELETE', '/console/api/session');
    } finally {
      setSession(null);
      setNotice('You are signed out.');
      location.hash = '#/';
    }
  }, []);

  if (loadError) return <main class="page"><ErrorLine error={loadError} /></main>;
  if (session === undefined || config === null) return <main class="page"><Loading /></main>;

  // The invitation page works signed out too (accept onto a new free account).
  if (route.path[0] === 'accept') {
    return (
      <Shell session={session} signOut={signOut} version={config.version}>
        <AcceptPage route={route} session={session} onSignedIn={refresh} />
      </Shell>
    );
  }
  if (session === null) {
    return (
      <Shell session={null} signOut={signOut} version={config.version}>
        <SignIn oidc={config.oidc} notice={notice} onSignedIn={(s) => { setNotice(null); setSession(s); }} />
      </Shell>
    );
  }
  const state: SessionState = { session, signOut, refresh };
  return (
    <SessionContext.Provider value={state}>
      <Shell session={session} signOut={signOut} version={config.version}>
        <Suspense fallback={<Loading />}>
          <Page route={route} />
        </Suspense>
      </Shell>
    </SessionContext.Provider>
  );
}

function Page({ route }: { route: ReturnType<typeof useRoute> }) {
  const [a, b, c, d, e] = route.path;
  if (a === 'w' && b) {
    if (c === 'queues' && d && e === 'events') return <EventsPage tenant={b} queue={d} query={route.query} />;
    if (c === 'events' && d) return <EventPage tenant={b} eventId={d} />;
    if (c === 'sandbox') return <SandboxPage tenant={b} run={route.query.get('run') ?? ''} />;
    if (c === 'producer') return <ProducerPage tenant={b} tab={d ?? 'streams'} />;
    if (c === 'partner') return <PartnerPage tenant={b} integration={d ?? route.query.get('integration') ?? ''} producer={route.query.get('producer') ?? ''} />;
    // A workspace opens on its overview (issue 26).
    return <WorkspacePage tenant={b} tab={c ?? 'overview'} sub={d} />;
  }
  return <LicenseHome tab={a === 'keys' ? 'keys' : 'workspaces'} />;
}

function Shell(props: { session: Session | null; signOut: () => Promise<void>; version: string; children: preact.ComponentChildren }) {
  return (
    <>
      <header class="top">
        <a class="brand" href={href([])}>streamgate</a>
        {props.session && (
          <div class="who">
            <span class="muted" data-testid="subject">{props.session.licensePublicId ?? props.session.subject}</span>
            <button type="button" onClick={() => void props.signOut()}>Sign out</button>
          </div>
        )}
      </header>
      <main class="page">{props.children}</main>
      <footer class="muted foot">streamgate console {props.version}</footer>
    </>
  );
}
