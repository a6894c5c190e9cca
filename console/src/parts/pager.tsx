import { useEffect, useState } from 'react';
import { pageAfter } from '../api/cursor';
import { navigate, useLocated, withParams } from '../route';

// A list's filters and page number live in the URL's fragment (`?status=FAILED&page=3`): a reload, back and forward
// or a shared link show the same rows, and another page (another queue) starts from its own, not from the last one's.

export interface ListState<K extends string> {
  /** The filters, as the URL holds them ('' when unset). */
  values: Record<K, string>;
  /** The page shown, from 1. */
  page: number;
  /** The cursor to read the page with (`after`). */
  after: string | null;
  /** A new filter value: back to page 1, in place of the current history entry (typing is not a trail of steps). */
  set(name: K, value: string): void;
  /** Another page: a new history entry, so that back returns to this one. */
  goTo(page: number, options?: { replace?: boolean }): void;
  /** `base` (a fragment without query) with this list's filters and page: a task's panel and its Close link. */
  at(base: string): string;
}

export function useListState<K extends string>(names: readonly K[], size: number): ListState<K> {
  const { params, path } = useLocated();
  const values = Object.fromEntries(names.map((name) => [name, params.get(name) ?? ''])) as Record<K, string>;
  const asked = Number(params.get('page'));
  const page = Number.isInteger(asked) && asked >= 1 ? asked : 1;
  // Page 1 is the address without a page.
  const at = (base: string, next: Record<string, string | number> = {}) => {
    const merged: Record<string, string | number | undefined> = { ...Object.fromEntries(params.entries()), ...next };
    if (Number(merged.page) <= 1) merged.page = undefined;
    return withParams(base, merged);
  };
  return {
    values,
    page,
    after: pageAfter(page, size),
    set: (name, value) => navigate(at(path, { [name]: value, page: 1 }), { replace: true }),
    goTo: (to, { replace = false } = {}) => navigate(at(path, { page: to }), { replace }),
    at: (base) => at(base),
  };
}

/** First, previous, a page number to jump to, next and last; "41–60 of 600" between them. */
/** `loading`: the total is still the last read's (another filter's, maybe), so it cannot tell whether the page is past the end. */
export function Pager({ state, size, total, hasNext, label, loading = false }: { state: Pick<ListState<string>, 'page' | 'goTo'>; size: number; total: number | undefined; hasNext: boolean; label: string; loading?: boolean }) {
  const { page, goTo } = state;
  const last = total === undefined ? undefined : Math.max(1, Math.ceil(total / size));
  const first = (page - 1) * size + 1;
  // Past the end (the rows were deleted, or a link named a page that no longer exists): the last page instead.
  useEffect(() => {
    if (!loading && last !== undefined && page > last) goTo(last, { replace: true });
  }, [loading, last, page, goTo]);
  const [jump, setJump] = useState(String(page));
  useEffect(() => setJump(String(page)), [page]);
  return (
    <nav className="pager" aria-label={`${label} pages`}>
      <button type="button" onClick={() => goTo(1)} disabled={page === 1}>
        « First
      </button>
      <button type="button" onClick={() => goTo(page - 1)} disabled={page === 1}>
        ← Previous
      </button>
      <span aria-live="polite">
        {total === undefined ? '…' : total === 0 ? `No ${label}` : `${first.toLocaleString('en')}–${Math.min(first + size - 1, total).toLocaleString('en')} of ${total.toLocaleString('en')}`}
      </span>
      {last !== undefined && last > 1 && (
        <form
          className="inline"
          onSubmit={(e) => {
            e.preventDefault();
            const to = Number(jump);
            if (Number.isInteger(to)) goTo(Math.min(Math.max(to, 1), last));
          }}
        >
          <label>
            Page <input type="number" min={1} max={last} step={1} value={jump} onChange={(e) => setJump(e.target.value)} size={4} /> of {last.toLocaleString('en')}
          </label>
          <button type="submit">Go</button>
        </form>
      )}
      <button type="button" onClick={() => goTo(page + 1)} disabled={!hasNext}>
        Next →
      </button>
      <button type="button" onClick={() => last !== undefined && goTo(last)} disabled={last === undefined || page >= last}>
        Last »
      </button>
    </nav>
  );
}
