import { useEffect, useState } from 'react';

// Pages are addressed by the URL's fragment (#/queues/mail?status=FAILED&page=3), so the gateway serves one page at
// /console and a reload, back and forward, or a shared link opens the same view: a page's filters and its page
// number live in the fragment's query, not in the page's memory.

export type Route =
  | { page: 'home' }
  | { page: 'queues' }
  | { page: 'queue'; queue: string; task?: string }
  | { page: 'jobs' }
  | { page: 'job'; job: string }
  | { page: 'notifications' }
  | { page: 'failures' }
  | { page: 'request'; incomingId: string };

/** The route and the fragment's query (`?status=FAILED&page=3`), each page reading its own. */
export interface Located {
  route: Route;
  params: URLSearchParams;
  /** The fragment's path without its query: the same page, whatever its filters. */
  path: string;
}

export function locate(hash: string): Located {
  const fragment = hash.replace(/^#\/?/, '');
  const at = fragment.indexOf('?');
  const path = at === -1 ? fragment : fragment.slice(0, at);
  const params = new URLSearchParams(at === -1 ? '' : fragment.slice(at + 1));
  const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  const [first, second, third, fourth] = parts;
  const route: Route =
    first === 'queues' && second
      ? { page: 'queue', queue: second, ...(third === 'tasks' && fourth && { task: fourth }) }
      : first === 'queues'
        ? { page: 'queues' }
        : first === 'jobs' && second
          ? { page: 'job', job: second }
          : first === 'jobs'
            ? { page: 'jobs' }
            : first === 'notifications' && second
              ? { page: 'request', incomingId: second }
              : first === 'notifications'
                ? { page: 'notifications' }
                : first === 'failures'
                  ? { page: 'failures' }
                  : { page: 'home' };
  return { route, params, path: `#/${path}` };
}

/** The fragment of a page, names encoded. */
export const href = (...parts: string[]) => `#/${parts.map(encodeURIComponent).join('/')}`;

/** `base` (a fragment without query) with `params`, empty values left out. */
export function withParams(base: string, params: Record<string, string | number | undefined>): string {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value !== undefined && value !== '') query.set(name, String(value));
  const text = query.toString();
  return text ? `${base}?${text}` : base;
}

export function useLocated(): Located {
  const [located, setLocated] = useState(() => locate(location.hash));
  useEffect(() => {
    const changed = () => setLocated(locate(location.hash));
    addEventListener('hashchange', changed);
    return () => removeEventListener('hashchange', changed);
  }, []);
  return located;
}

export function useRoute(): Route {
  return useLocated().route;
}

/**
 * Goes to `fragment`: as a new history entry (a page of a list: back returns to the one before), or in place of the
 * current one (`replace`: each keystroke of a search box would otherwise be a step of the back button).
 */
export function navigate(fragment: string, { replace = false } = {}): void {
  if (fragment === location.hash) return;
  if (replace) location.replace(fragment);
  else location.hash = fragment;
}
