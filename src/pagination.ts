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
}

export interface Page<T> {
  items: T[];
  totalCount: number;
  skip: number;
  take: number;
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
