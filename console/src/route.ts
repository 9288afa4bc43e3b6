import { useEffect, useState } from 'preact/hooks';

/**
 * Hash routing (`/console/#/w/ten_…/queues`): the server only ever serves
 * /console/, and what follows '#' never leaves the browser (so an invite
 * token in an invite link is not sent to the server or logged by a proxy).
 */
export interface Route {
  path: string[];
  query: URLSearchParams;
}

function current(): Route {
  const raw = location.hash.replace(/^#/, '') || '/';
  const [p = '/', q = ''] = raw.split('?', 2);
  return { path: p.split('/').filter(Boolean).map(decodeURIComponent), query: new URLSearchParams(q) };
}

export function useRoute(): Route {
  const [route, setRoute] = useState(current);
  useEffect(() => {
    const onChange = () => setRoute(current());
    addEventListener('hashchange', onChange);
    return () => removeEventListener('hashchange', onChange);
  }, []);
  return route;
}

/** A link target for `path` segments plus an optional query. */
export function href(segments: string[], query?: Record<string, string | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined && v !== '') q.set(k, v);
  const qs = q.toString();
  return `#/${segments.map(encodeURIComponent).join('/')}${qs ? `?${qs}` : ''}`;
}

export function navigate(segments: string[], query?: Record<string, string | undefined>): void {
  location.hash = href(segments, query);
}
