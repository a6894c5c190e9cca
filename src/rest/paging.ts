import { z } from 'zod';
import { offsetCursor } from '../graphql/common.js';

// Legacy lists page by number (0-based, like the stub area's currentPage); GraphQL pages by cursor.

export const legacyPage = {
  pageSize: z.number({ message: 'must be an integer' }).int('must be an integer').min(1, 'must be at least 1').optional(),
  pageNumber: z.number({ message: 'must be an integer' }).int('must be an integer').min(0, 'must be at least 0').max(1_000_000).optional(),
};

/** GraphQL `first`/`after` for a legacy page; the page size bound is enforced by the GraphQL edge. */
export function pageVariables(params: { pageSize?: number | undefined; pageNumber?: number | undefined }, defaultPageSize: number) {
  const size = params.pageSize ?? defaultPageSize;
  const offset = (params.pageNumber ?? 0) * size;
  return { first: size, after: offset > 0 ? offsetCursor(offset - 1) : null };
}
