import { BREAK, GraphQLError, Kind, TypeInfo, getVariableValues, visit, visitWithTypeInfo, type DocumentNode, type ExecutionArgs, type ExecutionResult, type GraphQLSchema, type Source, type SourceLocation, type VariableDefinitionNode } from 'graphql';
import { compileQuery, isCompiledQuery, type CompiledQuery } from 'graphql-jit';
import { operationCache, selectedOperation } from './operation.js';
import { compiledWithStablePaths } from './stable-paths.js';

// Queries and mutations that run again and again run as a function compiled once per document and operation
// (graphql-jit) instead of graphql-js walking the document for every field of every row. Compiling costs far more
// than one run, so a document is compiled on its (compileAfter + 1)-th run, as mercurius' `jit: N` does: a one-off
// document (a value written into the query text) runs on graphql-js and costs what it costs on plain Yoga.
// Documents are cached by Yoga's parser cache (an LRU), and the runs counted and the compiled function live as long
// as their document does. Subscriptions, anything graphql-jit cannot compile, and variables that do not coerce run on
// the executor Yoga was given, so their errors read exactly as before.

/** A compiled operation, with the variable definitions graphql-js coerces against before it runs. */
export interface CompiledOperation {
  run: CompiledQuery;
  variableDefinitions: readonly VariableDefinitionNode[];
  /** Variables that decide an `@skip`/`@include`: graphql-jit skips a field whose condition is null, graphql-js refuses it. */
  conditionVariables: readonly string[];
}

const compiled = operationCache<CompiledOperation | null>();
const runsSoFar = operationCache<number>();

/** The compiled operation once the document has run `compileAfter` times before (null until then). */
export function hotCompiledOperation(schema: GraphQLSchema, document: DocumentNode, operationName: string | null | undefined, compileAfter: number): CompiledOperation | null {
  if (compileAfter > 0) {
    const slot = compiled(schema, document, operationName);
    if (slot.has()) return slot.get() ?? null;
    const runs = runsSoFar(schema, document, operationName);
    const before = runs.get() ?? 0;
    if (before < compileAfter) {
      runs.set(before + 1);
      return null;
    }
  }
  return compiledOperation(schema, document, operationName);
}

/** The compiled operation of a valid document (null when graphql-jit cannot compile it or should not), made once. */
export function compiledOperation(schema: GraphQLSchema, document: DocumentNode, operationName?: string | null): CompiledOperation | null {
  const slot = compiled(schema, document, operationName);
  if (slot.has()) return slot.get() ?? null;
  const operation = selectedOperation(document, operationName);
  const compile = () => compileQuery(schema, document, operationName ?? undefined);
  const made = !operation ? null : loadsRelations(schema, document) ? compiledWithStablePaths(schema, compile) : compile();
  const usable = operation && made && isCompiledQuery(made) ? { run: made, variableDefinitions: operation.variableDefinitions ?? [], conditionVariables: conditionVariables(document) } : null;
  slot.set(usable);
  return usable;
}

/** The variables given as the `if` of an `@skip` or `@include` anywhere in the document. */
function conditionVariables(document: DocumentNode): string[] {
  const names = new Set<string>();
  visit(document, {
    Directive(directive) {
      if (directive.name.value !== 'skip' && directive.name.value !== 'include') return;
      for (const argument of directive.arguments ?? []) if (argument.value.kind === Kind.VARIABLE) names.add(argument.value.name.value);
    },
  });
  return [...names];
}

/**
 * Whether a document selects a Prisma relation (a Pothos prisma plugin field that reads what its parent's query
 * preloaded). The plugin finds that preloaded data by the identity of resolve info's path objects, which graphql-jit
 * does not share between a field and its children: without stable paths it fell back to a query per relation
 * (measured: a person with organizations went from 1 statement to 3). Other documents need no wrapped resolvers.
 */
function loadsRelations(schema: GraphQLSchema, document: DocumentNode): boolean {
  const typeInfo = new TypeInfo(schema);
  let found = false;
  visit(
    document,
    visitWithTypeInfo(typeInfo, {
      Field() {
        const extensions = typeInfo.getFieldDef()?.extensions as Record<string, unknown> | undefined;
        if (extensions && ('pothosPrismaRelationField' in extensions || 'pothosPrismaFallback' in extensions || 'pothosPrismaLoader' in extensions)) {
          found = true;
          return BREAK;
        }
        return undefined;
      },
    }),
  );
  return found;
}

type Executor = (args: ExecutionArgs) => ExecutionResult | Promise<ExecutionResult>;

/**
 * Runs `args` compiled when its variables coerce (graphql-js coerces them first: its messages name the variable and
 * path and carry the scalar's own reason); otherwise, or when it cannot be compiled, on `fallback`.
 * `variablesFromRoute`: the variables were made by a legacy route from parameters its rule validated, so the compiled
 * function's own coercion is the check, and only what it refuses is run again on `fallback` (graphql-js's errors,
 * word for word); the graphql-js pass that comes first otherwise is skipped.
 */
export function executeCompiled(args: ExecutionArgs, fallback: Executor, { variablesFromRoute = false, compileAfter = 0 } = {}): ExecutionResult | Promise<ExecutionResult> {
  const operation = hotCompiledOperation(args.schema, args.document, args.operationName, compileAfter);
  if (!operation) return fallback(args);
  // A null condition is graphql-js's error to give (word for word), not a field graphql-jit would silently skip.
  if (operation.conditionVariables.length && operation.conditionVariables.some((name) => args.variableValues?.[name] === null)) return fallback(args);
  if (!variablesFromRoute) {
    const coerced = getVariableValues(args.schema, operation.variableDefinitions, args.variableValues ?? {});
    if (coerced.errors) return fallback(args);
  }
  const result = operation.run.query(args.rootValue, args.contextValue, args.variableValues ?? {}) as ExecutionResult | Promise<ExecutionResult>;
  // graphql-jit answers variables it cannot coerce with errors and no data at all (a run that began has `data`).
  if (variablesFromRoute && !(result instanceof Promise) && !('data' in result)) return fallback(args);
  const source = args.document.loc?.source;
  if (!source) return result;
  return result instanceof Promise ? result.then((done) => located(done, source)) : located(result, source);
}

/**
 * graphql-jit's errors carry line and column but not the position in the document, which is what Yoga keeps when it
 * serializes an error: made again as graphql-js makes them, so every field error still names its location.
 */
function located(result: ExecutionResult, source: Source): ExecutionResult {
  if (!result.errors?.length) return result;
  return {
    ...result,
    errors: result.errors.map((error) =>
      error.locations?.length && !error.positions
        ? new GraphQLError(error.message, {
            source,
            positions: error.locations.map((location) => positionOf(source.body, location)),
            ...(error.path && { path: error.path }),
            ...(error.originalError && { originalError: error.originalError }),
            ...(error.extensions && { extensions: error.extensions }),
          })
        : error,
    ),
  };
}

/** The offset of a line and column in `body` (lines end as graphql-js counts them: CRLF, LF or CR). */
function positionOf(body: string, { line, column }: SourceLocation): number {
  const terminators = /\r\n|[\n\r]/g;
  let start = 0;
  for (let at = 1; at < line; at++) {
    const found = terminators.exec(body);
    if (!found) break;
    start = found.index + found[0].length;
  }
  return start + column - 1;
}
