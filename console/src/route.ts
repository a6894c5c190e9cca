import { useEffect, useState } from 'react';

// Pages are addressed by the URL's fragment (#/queues/mail), so the gateway serves one page at /console and a
// reload or a shared link opens the same view.

export type Route =
  | { page: 'home' }
  | { page: 'queues' }
  | { page: 'queue'; queue: string; task?: string }
  | { page: 'jobs' }
  | { page: 'job'; job: string }
  | { page: 'notifications' }
  | { page: 'request'; incomingId: string };

export function parseRoute(hash: string): Route {
  const parts = hash.replace(/^#\/?/, '').split('/').filter(Boolean).map(decodeURIComponent);
  const [first, second, third, fourth] = parts;
  if (first === 'queues' && second) return { page: 'queue', queue: second, ...(third === 'tasks' && fourth && { task: fourth }) };
  if (first === 'queues') return { page: 'queues' };
  if (first === 'jobs' && second) return { page: 'job', job: second };
  if (first === 'jobs') return { page: 'jobs' };
  if (first === 'notifications' && second) return { page: 'request', incomingId: second };
  if (first === 'notifications') return { page: 'notifications' };
  return { page: 'home' };
}

/** The fragment of a page, names encoded. */
export const href = (...parts: string[]) => `#/${parts.map(encodeURIComponent).join('/')}`;

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location.hash));
  useEffect(() => {
    const changed = () => setRoute(parseRoute(location.hash));
    addEventListener('hashchange', changed);
    return () => removeEventListener('hashchange', changed);
  }, []);
  return route;
}
