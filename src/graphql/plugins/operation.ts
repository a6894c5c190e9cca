import {
  getNamedType,
  getNullableType,
  isListType,
  isObjectType,
  isInterfaceType,
  Kind,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLField,
  type GraphQLNamedType,
  type GraphQLObjectType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';
import { createGraphQLError } from 'graphql-yoga';
import type { GraphQLError } from 'graphql';

// What the request plugins need to know about an operation before it runs: its root fields (after fragments),
// and its depth, alias count and estimated cost.

export interface RootField {
  name: string;
  field: GraphQLField<unknown, unknown> | undefined;
}

export interface OperationShape {
  type: 'query' | 'mutation' | 'subscription';
  rootType: GraphQLObjectType | null | undefined;
  rootFields: RootField[];
}

export function selectedOperation(document: DocumentNode, operationName?: string | null): OperationDefinitionNode | undefined {
  const operations = document.definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  return operationName ? operations.find((o) => o.name?.value === operationName) : operations.length === 1 ? operations[0] : undefined;
}

function fragmentsOf(document: DocumentNode): Map<string, FragmentDefinitionNode> {
  return new Map(
    document.definitions.filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION).map((f) => [f.name.value, f]),
  );
}

// Parsed documents are cached (Yoga's parser cache, the legacy routes' static documents), so what depends only on the
// document is worked out once per schema, document and operation name.

/** Values kept per schema, document and operation name; they go when their schema or document does. */
export function operationCache<T>(): (schema: GraphQLSchema, document: DocumentNode, operationName?: string | null) => { has(): boolean; get(): T | undefined; set(value: T): void } {
  const bySchema = new WeakMap<GraphQLSchema, WeakMap<DocumentNode, Map<string, T>>>();
  return (schema, document, operationName) => {
    let byDocument = bySchema.get(schema);
    if (!byDocument) bySchema.set(schema, (byDocument = new WeakMap()));
    let byName = byDocument.get(document);
    if (!byName) byDocument.set(document, (byName = new Map()));
    const names = byName;
    const key = operationName ?? '';
    return { has: () => names.has(key), get: () => names.get(key), set: (value) => void names.set(key, value) };
  };
}

const shapes = operationCache<OperationShape | undefined>();

/** Every field selected at the root of the operation, through fragment spreads and inline fragments. */
export function operationShape(schema: GraphQLSchema, document: DocumentNode, operationName?: string | null): OperationShape | undefined {
  const slot = shapes(schema, document, operationName);
  if (slot.has()) return slot.get();
  const shape = findOperationShape(schema, document, operationName);
  slot.set(shape);
  return shape;
}

function findOperationShape(schema: GraphQLSchema, document: DocumentNode, operationName?: string | null): OperationShape | undefined {
  const operation = selectedOperation(document, operationName);
  if (!operation) return undefined;
  const rootType =
    operation.operation === 'query' ? schema.getQueryType() : operation.operation === 'mutation' ? schema.getMutationType() : schema.getSubscriptionType();
  const fragments = fragmentsOf(document);
  const names = new Set<string>();
  const seen = new Set<string>();
  const collect = (set: SelectionSetNode) => {
    for (const s of set.selections) {
      if (s.kind === Kind.FIELD) names.add(s.name.value);
      else if (s.kind === Kind.INLINE_FRAGMENT) collect(s.selectionSet);
      else if (!seen.has(s.name.value)) {
        seen.add(s.name.value);
        const fragment = fragments.get(s.name.value);
        if (fragment) collect(fragment.selectionSet);
      }
    }
  };
  collect(operation.selectionSet);
  const fields = rootType?.getFields() ?? {};
  return { type: operation.operation, rootType, rootFields: [...names].map((name) => ({ name, field: fields[name] })) };
}

export interface OperationSize {
  depth: number;
  aliases: number;
  cost: number;
  /** Whether a variable's value entered the count (a `first: $n`): if not, the size is the document's alone. */
  readsVariables: boolean;
}

export interface SizeOptions {
  defaultPageSize: number;
  maxPageSize: number;
  /** Stop counting once past this cost (the answer is then only "too costly"). */
  costCeiling: number;
}

/**
 * Depth (root fields are 1; introspection fields add none), aliases (every aliased field, fragments counted where
 * spread), and cost: every field costs 1, and what a list field selects is counted once per item it may
 * return: the `first` argument of the nearest field above that has one (its variable's value when it is one),
 * else DEFAULT_PAGE_SIZE, never more than MAX_PAGE_SIZE.
 */
export function operationSize(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  variables: Record<string, unknown> | null | undefined,
  options: SizeOptions,
): OperationSize | undefined {
  const shape = operationShape(schema, document, operationName);
  const operation = selectedOperation(document, operationName);
  if (!shape || !operation || !shape.rootType) return undefined;
  const fragments = fragmentsOf(document);
  let depth = 0;
  let aliases = 0;
  let readsVariables = false;

  const pageOf = (field: FieldNode, inherited: number): number => {
    const arg = field.arguments?.find((a) => a.name.value === 'first');
    if (!arg) return inherited;
    let value: unknown;
    if (arg.value.kind === Kind.INT) value = Number(arg.value.value);
    else if (arg.value.kind === Kind.VARIABLE) {
      readsVariables = true;
      value = variables?.[arg.value.name.value];
    }
    if (value === undefined || value === null) return options.defaultPageSize;
    return typeof value === 'number' && Number.isInteger(value) && value >= 0 ? Math.min(value, options.maxPageSize) : options.maxPageSize;
  };

  const walk = (set: SelectionSetNode, parent: GraphQLNamedType | undefined, level: number, page: number, inIntrospection: boolean, spreads: Set<string>): number => {
    let cost = 0;
    for (const s of set.selections) {
      if (cost > options.costCeiling) return cost;
      if (s.kind === Kind.INLINE_FRAGMENT) {
        const narrowed = s.typeCondition ? (schema.getType(s.typeCondition.name.value) ?? parent) : parent;
        cost += walk(s.selectionSet, narrowed, level, page, inIntrospection, spreads);
        continue;
      }
      if (s.kind === Kind.FRAGMENT_SPREAD) {
        const fragment = fragments.get(s.name.value);
        if (!fragment || spreads.has(s.name.value)) continue;
        const next = new Set(spreads).add(s.name.value);
        cost += walk(fragment.selectionSet, schema.getType(fragment.typeCondition.name.value) ?? parent, level, page, inIntrospection, next);
        continue;
      }
      if (s.alias) aliases++;
      const introspection = inIntrospection || s.name.value.startsWith('__');
      const here = introspection ? level : level + 1;
      depth = Math.max(depth, here);
      const def = parent && (isObjectType(parent) || isInterfaceType(parent)) ? parent.getFields()[s.name.value] : undefined;
      let fieldCost = 1;
      if (s.selectionSet) {
        const childPage = pageOf(s, page);
        const children = walk(s.selectionSet, def ? getNamedType(def.type) : undefined, here, childPage, introspection, spreads);
        const multiplier = def && isListType(getNullableType(def.type)) && !introspection ? childPage : 1;
        fieldCost += multiplier * children;
      }
      cost += fieldCost;
    }
    return cost;
  };

  const cost = walk(operation.selectionSet, shape.rootType, 0, options.defaultPageSize, false, new Set());
  return { depth, aliases, cost, readsVariables };
}

/** An error that stops an operation before it runs; `status` goes to HTTP clients, never over WebSocket. */
/**
 * Whether a refusal of this request carries its HTTP status (401, 403, 429, 400): over plain HTTP, yes. Not over
 * graphql-ws (no request) nor over server-sent events, whose clients (graphql-sse) read errors only from a 200
 * stream and would otherwise see a bare "NetworkError 403": there the error travels as a `next` event, as over
 * graphql-ws.
 */
export function carriesHttpStatus(request: Request | undefined): boolean {
  if (!request) return false;
  const accept = request.headers.get('accept') ?? '';
  return !accept.includes('text/event-stream') || /application\/(graphql-response\+)?json/.test(accept);
}

export function refusal(message: string, code: string, status: number | undefined, extra: Record<string, unknown> = {}, headers?: Record<string, string>): GraphQLError {
  return createGraphQLError(message, {
    extensions: { code, ...extra, ...(status !== undefined && { http: { status, ...(headers && { headers }) } }) },
  });
}
