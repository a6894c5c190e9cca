import type { DocumentNode, GraphQLSchema } from 'graphql';
import type { GatewayMetrics } from '../kit/metrics.js';
import { operationCache, operationSize, sizeVariables, refusal } from './operation.js';
import type { OperationGuard } from './guards.js';

// GRAPHQL_MAX_DEPTH, GRAPHQL_MAX_ALIASES and GRAPHQL_MAX_COST, checked with the variables in hand (so `first: $n`
// counts as the value it will run with: the request's, else the variable's default) just before an operation runs,
// on every door (a guard of the pipeline); over a limit -> GRAPHQL_VALIDATION_FAILED.

export interface QueryLimits {
  maxDepth: number;
  maxAliases: number;
  maxCost: number;
  defaultPageSize: number;
  maxPageSize: number;
  unpagedListSize: number;
}

export function checkQueryLimits(
  limits: QueryLimits,
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  variables: Record<string, unknown> | null | undefined,
): string | null {
  const size = operationSize(schema, document, operationName, variables, { ...limits, costCeiling: limits.maxCost });
  if (!size) return null;
  if (size.depth > limits.maxDepth) return `The operation is nested ${size.depth} fields deep; at most ${limits.maxDepth} (GRAPHQL_MAX_DEPTH).`;
  if (size.aliases > limits.maxAliases) return `The operation uses ${size.aliases} aliases; at most ${limits.maxAliases} (GRAPHQL_MAX_ALIASES).`;
  if (size.cost > limits.maxCost) return `The operation's estimated cost is over ${limits.maxCost} (GRAPHQL_MAX_COST); ask for fewer fields or smaller pages.`;
  return null;
}

/** Verdicts kept per set of values of a document's size variables (beyond this many, judged every time). */
const VERDICTS_PER_DOCUMENT = 64;

interface DocumentVerdicts {
  /** sizeVariables of the document: the only variables a verdict depends on. */
  names: string[];
  byValues: Map<string, string | null>;
  /** The verdict of a document without such variables (most documents): one for every request. */
  alone?: { message: string | null };
}

/** The values of `names` as a cache key; undefined when one is not a plain scalar (such a request is judged afresh). */
function valuesKey(names: readonly string[], variables: Record<string, unknown> | null | undefined): string | undefined {
  let key = '';
  for (const name of names) {
    const present = variables != null && Object.hasOwn(variables, name);
    const value = present ? variables[name] : undefined;
    if (present && value !== null && typeof value !== 'number' && typeof value !== 'boolean') return undefined;
    key += present ? `${String(value)},` : '-,';
  }
  return key;
}

/**
 * The deepest bracket nesting ({ ( [) of a GraphQL source, outside strings and comments; counted before parsing
 * because graphql-js parses recursively and a source nested thousands deep would exhaust the stack.
 */
export function sourceNesting(text: string): number {
  let level = 0;
  let max = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '#') {
      while (i < text.length && text[i] !== '\n' && text[i] !== '\r') i++;
    } else if (c === '"') {
      if (text.startsWith('"""', i)) {
        const end = text.indexOf('"""', i + 3);
        i = end < 0 ? text.length : end + 2;
      } else {
        for (i++; i < text.length && text[i] !== '"' && text[i] !== '\n'; i++) if (text[i] === '\\') i++;
      }
    } else if (c === '{' || c === '(' || c === '[') {
      level++;
      if (level > max) max = level;
    } else if (c === '}' || c === ')' || c === ']') {
      level = Math.max(0, level - 1);
    }
  }
  return max;
}

/** The guard that checks depth, aliases and cost before an operation runs (bracket nesting is bounded before parsing: src/pipeline/documents.ts). */
export function queryLimitsGuard(limits: QueryLimits, metrics?: GatewayMetrics): OperationGuard {
  // Verdicts per schema (one per gateway), document and operation name, and per value of the variables the size
  // depends on (paging arguments, @skip/@include): a document with none is judged once.
  const verdicts = operationCache<DocumentVerdicts>();
  const check = (schema: GraphQLSchema, document: DocumentNode, operationName: string | null | undefined, variables: Record<string, unknown> | null | undefined) => {
    const slot = verdicts(schema, document, operationName);
    let cached = slot.get();
    if (cached?.alone) return cached.alone.message;
    if (!cached) slot.set((cached = { names: sizeVariables(document), byValues: new Map() }));
    if (cached.names.length === 0) return (cached.alone = { message: checkQueryLimits(limits, schema, document, operationName, variables) }).message;
    const key = valuesKey(cached.names, variables);
    if (key !== undefined && cached.byValues.has(key)) return cached.byValues.get(key) ?? null;
    const message = checkQueryLimits(limits, schema, document, operationName, variables);
    if (key !== undefined && cached.byValues.size < VERDICTS_PER_DOCUMENT) cached.byValues.set(key, message);
    return message;
  };
  return (args) => {
    const message = check(args.schema, args.document, args.operationName, args.variableValues);
    if (!message) return null;
    metrics?.rejected.inc({ reason: 'query_limits' });
    const withHttpStatus = (args.contextValue as { httpStatus?: boolean }).httpStatus === true;
    return { errors: [refusal(message, 'GRAPHQL_VALIDATION_FAILED', withHttpStatus)] };
  };
}
