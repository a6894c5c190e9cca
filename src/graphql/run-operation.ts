import { validate, type DocumentNode, type ExecutionArgs, type ExecutionResult, type GraphQLError, type GraphQLSchema } from 'graphql';
import { normalizedExecutor } from '@graphql-tools/executor';
import { executeCompiled } from './plugins/use-compiled-execution.js';
import { resultWithinDeadline } from './plugins/use-request-deadline.js';
import type { GraphQLRunner } from '../rest/execute.js';
import { firstRefusal, type OperationGuard } from './plugins/operation-guards.js';
import { selectedOperation } from './plugins/operation.js';

// The legacy paths' operations run here, not through Yoga's envelop: their documents are the gateway's own (parsed
// once, validated once, no subscriptions), so what envelop adds per call (a plugin orchestra, context merging, result
// hooks) is work with no effect. What every operation must pass is the same as Yoga's: the same context parts, the
// same guards in the same order, the same metrics, the same error masking (the parts come from the plugins in app.ts).

export interface OperationParts {
  schema: GraphQLSchema;
  /** The context Yoga would build for `request` (services, request id, caller). */
  contextOf(request: Request, params: { query: string; variables: Record<string, unknown>; operationName?: string }): Promise<Record<string, unknown>>;
  guards: readonly OperationGuard[];
  /** Starts timing an operation; the returned function counts its outcome. */
  observe(args: { schema: GraphQLSchema; document: DocumentNode; operationName?: string }): (result: ExecutionResult) => void;
  /** Yoga's error masking (an error the client may not see becomes "Unexpected error." and is logged). */
  mask(error: GraphQLError): GraphQLError;
  /** Runs of a document before it is compiled (GRAPHQL_JIT_AFTER_RUNS). */
  compileAfter: number;
  /** REQUEST_DEADLINE_MS: past it an operation answers SERVICE_UNAVAILABLE (0: no deadline). */
  deadlineMs: number;
  /** With tracing on, the operation's span around its execution (src/telemetry/tracing.ts); the same executor runs either way. */
  trace?: OperationTracer;
}

/** What an operation span needs to know of the operation it wraps. */
export interface TracedOperation {
  type: string;
  name: string;
  requestId: string | undefined;
}
export type OperationTracer = (operation: TracedOperation, run: () => Promise<ExecutionResult>) => Promise<ExecutionResult>;

function tracedOperation(document: DocumentNode, operationName: string | undefined, contextValue: Record<string, unknown>): TracedOperation {
  const operation = selectedOperation(document, operationName);
  const requestId = contextValue.requestId;
  return { type: operation?.operation ?? 'query', name: operation?.name?.value ?? 'anonymous', requestId: typeof requestId === 'string' ? requestId : undefined };
}

/**
 * Yoga's own executor, for what does not run compiled (variables that do not coerce): its early errors carry HTTP 400,
 * so /graphql answers them as Yoga does. Queries and mutations only: never a stream.
 */
const executeUncompiled = async (args: ExecutionArgs): Promise<ExecutionResult> => {
  const result = await normalizedExecutor(args);
  if (Symbol.asyncIterator in result) throw new Error('an operation run directly returned a stream');
  return result;
};

export interface OperationRunner {
  run: GraphQLRunner;
  /**
   * The same for a legacy route's own document, whose variables the route made from parameters its rule validated:
   * they are coerced once, by the compiled operation (src/graphql/plugins/use-compiled-execution.ts).
   */
  runRoute: GraphQLRunner;
  /** Whether `document` passes validation against the schema (worked out once per document). */
  isValid(document: DocumentNode): boolean;
  /** The masking every error a client sees goes through (an error thrown by a guard, say). */
  mask(error: GraphQLError): GraphQLError;
}

export function operationRunner(parts: OperationParts): OperationRunner {
  const { schema, guards } = parts;
  // Each document is validated once and runs compiled (src/graphql/plugins/use-compiled-execution.ts).
  const validity = new WeakMap<DocumentNode, readonly GraphQLError[]>();
  const validationErrors = (document: DocumentNode) => {
    let errors = validity.get(document);
    if (!errors) {
      errors = validate(schema, document);
      validity.set(document, errors);
    }
    return errors;
  };
  const runWith =
    (variablesFromRoute: boolean): GraphQLRunner =>
    async (request, document, query, variables, operationName) => {
      const errors = validationErrors(document);
      if (errors.length) return { errors };
      // The deadline covers the caller's key look-up and the guards too: each may wait on the database.
      let done: ((result: ExecutionResult) => void) | undefined;
      const result = await resultWithinDeadline(parts.deadlineMs, async () => {
        const contextValue = await parts.contextOf(request, { query, variables, ...(operationName !== undefined && { operationName }) });
        const args = { schema, document, variableValues: variables, contextValue, ...(operationName !== undefined && { operationName }) };
        done = parts.observe(args);
        const refused = await firstRefusal(guards, args);
        if (refused) return refused;
        const execute = async () => executeCompiled(args, executeUncompiled, { variablesFromRoute, compileAfter: parts.compileAfter });
        return parts.trace ? parts.trace(tracedOperation(document, operationName, contextValue), execute) : execute();
      });
      done?.(result);
      return result.errors?.length ? { ...result, errors: result.errors.map(parts.mask) } : result;
    };
  return { run: runWith(false), runRoute: runWith(true), isValid: (document) => validationErrors(document).length === 0, mask: parts.mask };
}
