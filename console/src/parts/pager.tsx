import { useCallback, useState } from 'react';

// Pages are read on the server (`first`/`after`): the pager keeps the cursors of the pages before this one.

export interface PageCursor {
  after: string | null;
  index: number;
  next(endCursor: string | null | undefined): void;
  previous(): void;
  reset(): void;
}

export function usePageCursor(): PageCursor {
  const [stack, setStack] = useState<(string | null)[]>([null]);
  return {
    after: stack.at(-1) ?? null,
    index: stack.length - 1,
    next: useCallback((end: string | null | undefined) => end && setStack((s) => [...s, end]), []),
    previous: useCallback(() => setStack((s) => (s.length > 1 ? s.slice(0, -1) : s)), []),
    reset: useCallback(() => setStack([null]), []),
  };
}

export function Pager({ cursor, size, total, hasNext, endCursor, label }: { cursor: PageCursor; size: number; total: number | undefined; hasNext: boolean; endCursor: string | null | undefined; label: string }) {
  const first = cursor.index * size + 1;
  return (
    <nav className="pager" aria-label={`${label} pages`}>
      <button type="button" onClick={cursor.previous} disabled={cursor.index === 0}>
        ← Previous
      </button>
      <span aria-live="polite">
        {total === undefined ? '…' : total === 0 ? `No ${label}` : `${first}–${Math.min(first + size - 1, total)} of ${total.toLocaleString('en')}`}
      </span>
      <button type="button" onClick={() => cursor.next(endCursor)} disabled={!hasNext}>
        Next →
      </button>
    </nav>
  );
}
