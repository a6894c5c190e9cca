import { execute, validate, type DocumentNode, type ExecutionResult, type GraphQLError, type GraphQLSchema } from 'graphql';
import { executeCompiled } from './plugins/use-compiled-execution.js';
import type { GraphQLRunner } from '../rest/execute.js';
import { firstRefusal, type OperationGuard } from './plugins/operation-guards.js';

// The legacy paths' operations run here, not through Yoga's envelop: their documents are the gateway's own (parsed
// once, validated once, no subscriptions), so what envelop adds per call (a plugin orchestra, context merging, result
// hooks) is work with no effect. What every operation must pass is the same as Yoga's: the same context parts, the
// same guards in the same order, the same metrics, the same error masking (the parts come from the plugins in app.ts).

export interface OperationParts {
  schema: GraphQLSchema;
  /** The context Yoga would build for `request` (services, request id, caller). */
  contextOf(request: Request, params: { query: string; variables: Record<string, unknown> }): Promise<Record<string, unknown>>;
  guards: readonly OperationGuard[];
  /** Starts timing an operation; the returned function counts its outcome. */
  observe(args: { schema: GraphQLSchema; document: DocumentNode }): (result: ExecutionResult) => void;
  /** Yoga's error masking (an error the client may not see becomes "Unexpected error." and is logged). */
  mask(error: GraphQLError): GraphQLError;
}

export function operationRunner(parts: OperationParts): GraphQLRunner {
  const { schema, guards } = parts;
  // Each document is validated once and runs compiled, as on /graphql (src/graphql/plugins/use-compiled-execution.ts).
  const validated = new WeakSet<DocumentNode>();
  return async (request, document, query, variables) => {
    if (!validated.has(document)) {
      const errors = validate(schema, document);
      if (errors.length) return { errors };
      validated.add(document);
    }
    const contextValue = await parts.contextOf(request, { query, variables });
    const args = { schema, document, variableValues: variables, contextValue };
    const done = parts.observe(args);
    const result = (await firstRefusal(guards, args)) ?? (await executeCompiled(args, execute));
    done(result);
    return result.errors?.length ? { ...result, errors: result.errors.map(parts.mask) } : result;
  };
}
