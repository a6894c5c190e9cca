import { z } from 'zod';
import { builtOncePerLimits } from './validation.js';

// One paging rule for every list in every area: offset windows with a bounded size.

export interface PageLimits {
  defaultPageSize: number;
  maxPageSize: number;
}

export interface Window {
  skip: number;
  take: number;
  /** Whether the caller asked for the number of all matching items: counting every row can cost far more than the page. */
  withTotal: boolean;
}

export interface Page<T> {
  items: T[];
  /** The number of all matching items when the window asked for it, else null (`countTotal` makes it on demand). */
  totalCount: number | null;
  /** Whether items follow this page. */
  hasMore: boolean;
  countTotal(): Promise<number>;
  skip: number;
  take: number;
}

/**
 * A page read by the one rule every list follows: with the total asked for, the page and the count side by side (or
 * `together`, one statement making both); without it, one row more than the page, which says whether another page
 * follows without counting every match.
 */
export async function readPage<T>(
  window: Window,
  rows: (skip: number, take: number) => Promise<T[]>,
  count: () => Promise<number>,
  together?: (skip: number, take: number) => Promise<{ items: T[]; totalCount: number }>,
): Promise<Page<T>> {
  const { skip, take } = window;
  if (window.withTotal) {
    const [items, totalCount] = together ? await together(skip, take).then((both) => [both.items, both.totalCount] as const) : await Promise.all([rows(skip, take), count()]);
    return { items, totalCount, hasMore: skip + items.length < totalCount, countTotal: () => Promise.resolve(totalCount), skip, take };
  }
  const items = await rows(skip, take + 1);
  const hasMore = items.length > take;
  if (hasMore) items.length = take;
  return { items, totalCount: null, hasMore, countTotal: count, skip, take };
}

function windowSchema(limits: PageLimits) {
  return z.object({
    skip: z.number().int().min(0).default(0),
    take: z.number().int().min(1).max(limits.maxPageSize, `at most ${limits.maxPageSize}`).default(limits.defaultPageSize),
  });
}

const windowSchemaFor = builtOncePerLimits((defaultPageSize: number, maxPageSize: number) => windowSchema({ defaultPageSize, maxPageSize }));

export function pageWindowSchema(limits: PageLimits): ReturnType<typeof windowSchema> {
  return windowSchemaFor(limits.defaultPageSize, limits.maxPageSize);
}
