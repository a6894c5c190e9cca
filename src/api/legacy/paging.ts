import { z } from 'zod';
import { MAX_CURSOR_OFFSET, offsetCursor } from '../../schema/common.js';

// Legacy lists page by number (0-based, like the stub area's currentPage); GraphQL pages by cursor. The legacy rule
// bounds both numbers here, so a refusal names what the caller sent (params.pageSize, params.pageNumber), never the
// `first` or `after` of the GraphQL operation a call becomes (nor a 32-bit overflow of its variables).

const MAX_PAGE_NUMBER = 1_000_000;

/** The paging parameters of a legacy list: pageSize 1..MAX_PAGE_SIZE, pageNumber 0.. (every page's offset a cursor can name). */
export function legacyPage(maxPageSize: number) {
  const maxPageNumber = Math.min(MAX_PAGE_NUMBER, Math.floor(MAX_CURSOR_OFFSET / maxPageSize));
  return {
    pageSize: z.number({ message: 'must be an integer' }).int('must be an integer').min(1, 'must be at least 1').max(maxPageSize, `must be at most ${maxPageSize} (MAX_PAGE_SIZE)`).optional(),
    pageNumber: z.number({ message: 'must be an integer' }).int('must be an integer').min(0, 'must be at least 0').max(maxPageNumber, `must be at most ${maxPageNumber}`).optional(),
  };
}

/** GraphQL `first`/`after` for a legacy page (within the bounds legacyPage checked). */
export function pageVariables(params: { pageSize?: number | undefined; pageNumber?: number | undefined }, defaultPageSize: number) {
  const size = params.pageSize ?? defaultPageSize;
  const offset = (params.pageNumber ?? 0) * size;
  return { first: size, after: offset > 0 ? offsetCursor(offset - 1) : null };
}
