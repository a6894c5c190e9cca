import { GraphQLError, Kind, type GraphQLResolveInfo, type SelectionSetNode } from 'graphql';
import type { z } from 'zod';
import { builder } from './builder.js';
import { INSTANT_RANGE_MESSAGE, isStorableInstant, parseInput, toFieldIssues } from '../validation.js';
import { ValidationError } from '../errors.js';
import { isoInstant } from './iso-instant.js';
import { pageWindowSchema, type Page, type Window } from '../pagination.js';
import type { GraphQLContext } from './context.js';
import type { ArgBuilder, ObjectRef } from '@pothos/core';
import type { AppTypes } from './builder.js';

type OutputRef<T> = ObjectRef<AppTypes, T>;
type PothosArgs = ArgBuilder<AppTypes>;

builder.scalarType('DateTime', {
  description: 'An instant, as an ISO 8601 string in UTC (for example 2026-01-31T12:00:00.000Z).',
  serialize: (value) => (value instanceof Date ? isoInstant(value) : String(value)),
  parseValue: (value) => parseDate(value),
  parseLiteral: (ast) => parseDate(ast.kind === Kind.STRING ? ast.value : null),
});

function parseDate(value: unknown): Date {
  const date = typeof value === 'string' ? new Date(value) : null;
  if (!date || Number.isNaN(date.getTime())) {
    throw new GraphQLError('DateTime must be an ISO 8601 date-time string', { extensions: { code: 'BAD_USER_INPUT' } });
  }
  if (!isStorableInstant(date)) throw new GraphQLError(`DateTime ${INSTANT_RANGE_MESSAGE}`, { extensions: { code: 'BAD_USER_INPUT' } });
  return date;
}

builder.scalarType('JSON', {
  description: 'Any JSON value.',
  serialize: (value) => value,
  parseValue: (value) => value,
});

export const PageInfo = builder
  .objectRef<{ hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string | null; endCursor: string | null }>('PageInfo')
  .implement({
    description: 'Where a page stands in its list.',
    fields: (t) => ({
      hasNextPage: t.exposeBoolean('hasNextPage', { description: 'More items follow this page.' }),
      hasPreviousPage: t.exposeBoolean('hasPreviousPage', { description: 'Items precede this page.' }),
      startCursor: t.exposeString('startCursor', { nullable: true, description: 'Cursor of the first item of the page.' }),
      endCursor: t.exposeString('endCursor', { nullable: true, description: 'Cursor of the last item; pass it as `after` for the next page.' }),
    }),
  });

/** Cursors are offsets, opaque to clients; the legacy layer pages by number through the same cursors. */
export function offsetCursor(offset: number): string {
  return Buffer.from(`o:${offset}`).toString('base64url');
}

/** The largest offset a cursor names (nine digits). */
export const MAX_CURSOR_OFFSET = 999_999_999;

function cursorOffset(cursor: string): number {
  const match = /^o:(\d{1,9})$/.exec(Buffer.from(cursor, 'base64url').toString());
  if (!match) throw new ValidationError([{ field: 'after', message: 'is not a cursor this API issued' }]);
  return Number(match[1]);
}

/** The window a connection field's arguments ask for; the total is counted only when the query selects `totalCount`. */
export function windowFromArgs(ctx: GraphQLContext, args: { first?: number | null; after?: string | null }, info: GraphQLResolveInfo): Window {
  const skip = args.after ? cursorOffset(args.after) + 1 : 0;
  const window = pageWindowSchema({ defaultPageSize: ctx.config.DEFAULT_PAGE_SIZE, maxPageSize: ctx.config.MAX_PAGE_SIZE }).safeParse({ skip, take: args.first ?? undefined });
  // Named as the caller sent them: the size is `first`, the offset came from `after`.
  if (!window.success) throw new ValidationError(toFieldIssues(window.error).map((issue) => ({ ...issue, field: issue.field === 'take' ? 'first' : 'after' })));
  return { ...window.data, withTotal: selectsField(info, 'totalCount') };
}

/**
 * Whether the field being resolved selects `name` directly (through fragments and inline fragments). Directives are
 * not weighed: a field under `@skip` still counts as selected, which only costs the count it might have saved.
 */
export function selectsField(info: Pick<GraphQLResolveInfo, 'fieldNodes' | 'fragments'>, name: string): boolean {
  const seen = new Set<string>();
  const within = (set: SelectionSetNode | undefined): boolean => {
    for (const selection of set?.selections ?? []) {
      if (selection.kind === Kind.FIELD) {
        if (selection.name.value === name) return true;
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        if (within(selection.selectionSet)) return true;
      } else if (!seen.has(selection.name.value)) {
        seen.add(selection.name.value);
        if (within(info.fragments[selection.name.value]?.selectionSet)) return true;
      }
    }
    return false;
  };
  return info.fieldNodes.some((node) => within(node.selectionSet));
}

export interface Connection<T> {
  /** A promise when the page was read without its total (the field is then resolved by counting after all). */
  totalCount: number | Promise<number>;
  nodes: T[];
  edges: { cursor: string; node: T }[];
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string | null; endCursor: string | null };
}

export function toConnection<T>(page: Page<T>): Connection<T> {
  const startCursor = page.items.length ? offsetCursor(page.skip) : null;
  const endCursor = page.items.length ? offsetCursor(page.skip + page.items.length - 1) : null;
  let edges: Connection<T>['edges'] | undefined;
  let counted: Promise<number> | undefined;
  return {
    // Counted here only if the selection said no total was wanted and the field is resolved all the same.
    get totalCount() {
      return page.totalCount ?? (counted ??= page.countTotal());
    },
    nodes: page.items,
    // Made when a query selects them: most pages are read through `nodes`, and a cursor per item is work for nothing.
    get edges() {
      return (edges ??= page.items.map((node, i) => ({ cursor: offsetCursor(page.skip + i), node })));
    },
    pageInfo: {
      hasNextPage: page.hasMore,
      hasPreviousPage: page.skip > 0,
      startCursor,
      endCursor,
    },
  };
}

/** Declares `<Name>Connection` and `<Name>Edge` for a node type. */
export function defineConnection<T>(name: string, nodeRef: OutputRef<T>, what: string) {
  const edge = builder.objectRef<{ cursor: string; node: T }>(`${name}Edge`).implement({
    description: `One ${what} and its cursor.`,
    fields: (t) => ({
      cursor: t.exposeString('cursor', { description: 'Opaque position of this item; pass it as `after`.' }),
      node: t.field({ type: nodeRef, description: `The ${what}.`, resolve: (e) => e.node as never }),
    }),
  });
  return builder.objectRef<Connection<T>>(`${name}Connection`).implement({
    description: `A page of ${what} items.`,
    fields: (t) => ({
      totalCount: t.int({ description: 'Number of items matching the filter, across all pages.', resolve: (c) => c.totalCount }),
      nodes: t.field({ type: [nodeRef], description: `The ${what} items of this page.`, resolve: (c) => c.nodes as never }),
      edges: t.field({ type: [edge], description: 'The items of this page with their cursors.', resolve: (c) => c.edges }),
      pageInfo: t.field({ type: PageInfo, description: 'Where this page stands.', resolve: (c) => c.pageInfo }),
    }),
  });
}

/** Arguments shared by every connection field. */
export const pageArgs = (t: PothosArgs) => ({
  first: t.int({ required: false, description: 'Page size (default DEFAULT_PAGE_SIZE, at most MAX_PAGE_SIZE).' }),
  after: t.string({ required: false, description: 'Return items after this cursor.' }),
});

export function validate<S extends z.ZodType>(schema: S, input: unknown, prefix = ''): z.output<S> {
  return parseInput(schema, input, prefix);
}

/** GraphQL input objects carry explicit nulls for absent fields; the rules treat absent and null alike. */
export function dropNulls(input: object | null | undefined): Record<string, unknown> {
  return Object.fromEntries(Object.entries(input ?? {}).filter(([, v]) => v !== null && v !== undefined));
}

/** GraphQL inputs carry explicit nulls at every depth; the rules treat absent and null alike. Values under `jsonKeys` are JSON and stay as given. */
export function dropNullsDeepExcept(input: unknown, jsonKeys: ReadonlySet<string>): Record<string, unknown> {
  const walk = (value: unknown): unknown => {
    if (value === null || typeof value !== 'object' || Array.isArray(value) || value instanceof Date) return value;
    return Object.fromEntries(
      Object.entries(value)
        .filter(([, v]) => v !== null && v !== undefined)
        .map(([k, v]) => [k, jsonKeys.has(k) ? v : walk(v)]),
    );
  };
  return (walk(input ?? {}) ?? {}) as Record<string, unknown>;
}
