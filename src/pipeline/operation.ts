import {
  getNamedType,
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
  type SelectionNode,
  type SelectionSetNode,
  type ValueNode,
  type VariableDefinitionNode,
  valueFromASTUntyped,
  visit,
} from 'graphql';
import { HTTP_STATUS_BY_CODE, type ErrorCode } from '../errors.js';
import { createGraphQLError } from '@graphql-tools/utils';
import type { GraphQLError } from 'graphql';
import { LIST_BOUNDS, PAGING_ARGUMENTS, isObjectList, pageItems, pagingArgument } from './list-bounds.js';

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
}

export interface SizeOptions {
  defaultPageSize: number;
  maxPageSize: number;
  /** Items of a list no paging argument and no bound of the data model limits (GRAPHQL_UNPAGED_LIST_SIZE). */
  unpagedListSize: number;
  /** Stop counting once past this cost (the answer is then only "too costly"). */
  costCeiling: number;
}

type Variables = Record<string, unknown> | null | undefined;

/** The value an argument or directive argument will have when the operation runs: graphql-js takes a variable's
 * value when the request gives one (null included), else its definition's default, else leaves it absent. */
function runtimeValue(value: ValueNode, variables: Variables, definitions: ReadonlyMap<string, VariableDefinitionNode>): unknown {
  if (value.kind !== Kind.VARIABLE) return valueFromASTUntyped(value);
  const name = value.name.value;
  if (variables && Object.hasOwn(variables, name)) return variables[name];
  const fallback = definitions.get(name)?.defaultValue;
  return fallback ? valueFromASTUntyped(fallback) : undefined;
}

/** Whether @skip/@include let a selection run, by the values the variables will have; an `if` that is not a boolean
 * fails variable coercion before anything runs, and is counted as included (the larger estimate). */
function runs(node: SelectionNode, variables: Variables, definitions: ReadonlyMap<string, VariableDefinitionNode>): boolean {
  for (const directive of node.directives ?? []) {
    const name = directive.name.value;
    if (name !== 'skip' && name !== 'include') continue;
    const condition = directive.arguments?.find((a) => a.name.value === 'if');
    const value = condition ? runtimeValue(condition.value, variables, definitions) : undefined;
    if (typeof value === 'boolean' && value === (name === 'skip')) return false;
  }
  return true;
}

/**
 * The variables whose values the size of an operation depends on: those given to a paging argument (PAGING_ARGUMENTS)
 * or to @skip/@include anywhere in the document. Empty for most documents, whose size is then the document's alone.
 */
export function sizeVariables(document: DocumentNode): string[] {
  const names = new Set<string>();
  visit(document, {
    Argument(node, _key, _parent, _path, ancestors) {
      if (node.value.kind !== Kind.VARIABLE) return;
      const owner = ancestors[ancestors.length - 1];
      const inCondition = owner && 'kind' in owner && owner.kind === Kind.DIRECTIVE && (owner.name.value === 'skip' || owner.name.value === 'include');
      if (inCondition || (owner && 'kind' in owner && owner.kind === Kind.FIELD && PAGING_ARGUMENTS.has(node.name.value))) names.add(node.value.name.value);
    },
  });
  return [...names];
}

/**
 * Depth (root fields are 1; introspection fields add none), aliases (every aliased field, fragments counted where
 * spread), and cost: every field costs 1, and what a list of objects selects is counted once per item it may return
 * (list-bounds.ts): its paging argument's value, or that of the field holding it (a connection's `first` for its
 * `nodes` and `edges`), else its own bound, else GRAPHQL_UNPAGED_LIST_SIZE. Values are those the operation will run with: the request's variables,
 * else the variables' defaults, else DEFAULT_PAGE_SIZE; a page the resolver refuses (outside 1..MAX_PAGE_SIZE) reads
 * nothing. Selections @skip/@include leave out are not counted, by the values their conditions will have.
 */
export function operationSize(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  variables: Variables,
  options: SizeOptions,
): OperationSize | undefined {
  const shape = operationShape(schema, document, operationName);
  const operation = selectedOperation(document, operationName);
  if (!shape || !operation || !shape.rootType) return undefined;
  const fragments = fragmentsOf(document);
  const definitions = new Map((operation.variableDefinitions ?? []).map((d) => [d.variable.name.value, d]));
  let depth = 0;
  let aliases = 0;

  const pageOf = (field: FieldNode, def: GraphQLField<unknown, unknown>): number | undefined => {
    const name = pagingArgument(def);
    if (!name) return undefined;
    const arg = field.arguments?.find((a) => a.name.value === name);
    return pageItems(arg ? runtimeValue(arg.value, variables, definitions) : undefined, options);
  };

  /** `page`: the items of the paging field whose result `set` selects from, for the lists directly in it. */
  const walk = (set: SelectionSetNode, parent: GraphQLNamedType | undefined, level: number, page: number | undefined, inIntrospection: boolean, spreads: Set<string>): number => {
    let cost = 0;
    for (const s of set.selections) {
      if (cost > options.costCeiling) return cost;
      if (!runs(s, variables, definitions)) continue;
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
        const ownPage = def && !introspection ? pageOf(s, def) : undefined;
        const list = def !== undefined && !introspection && isObjectList(def);
        const items = !list ? 1 : (ownPage ?? page ?? LIST_BOUNDS.get(`${parent!.name}.${s.name.value}`) ?? options.unpagedListSize);
        // A paging field that is not itself a list (a connection, a stub page) pages the lists its result holds.
        const children = walk(s.selectionSet, def ? getNamedType(def.type) : undefined, here, list ? undefined : ownPage, introspection, spreads);
        fieldCost += items * children;
      }
      cost += fieldCost;
    }
    return cost;
  };

  const cost = walk(operation.selectionSet, shape.rootType, 0, undefined, false, new Set());
  return { depth, aliases, cost };
}

/** An error that stops an operation before it runs; `status` goes to HTTP clients, never over WebSocket. */
export function refusal(message: string, code: ErrorCode, withHttpStatus: boolean, extra: Record<string, unknown> = {}, headers?: Record<string, string>): GraphQLError {
  return createGraphQLError(message, {
    extensions: { code, ...extra, ...(withHttpStatus && { http: { status: HTTP_STATUS_BY_CODE[code], ...(headers && { headers }) } }) },
  });
}
