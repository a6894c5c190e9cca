import type { DocumentNode, ExecutionResult, GraphQLSchema } from 'graphql';

// The rules an operation must pass before it runs (access, rate, storable input, query limits), each written once
// as a guard. The pipeline (src/pipeline/pipeline.ts) asks them, in order, before any operation of any door runs.

export interface GuardArgs {
  schema: GraphQLSchema;
  document: DocumentNode;
  operationName?: string | null | undefined;
  variableValues?: Record<string, unknown> | null | undefined;
  contextValue: unknown;
}

/** Null lets the operation run; a result refuses it (and is the answer). */
export type OperationGuard = (args: GuardArgs) => ExecutionResult | null | Promise<ExecutionResult | null>;

/** The first refusal of `guards`, asked in order; synchronous while every guard answers synchronously. */
export function firstRefusal(guards: readonly OperationGuard[], args: GuardArgs, from = 0): ExecutionResult | null | Promise<ExecutionResult | null> {
  for (let i = from; i < guards.length; i++) {
    const verdict = guards[i]!(args);
    if (verdict instanceof Promise) return verdict.then((refused) => refused ?? firstRefusal(guards, args, i + 1));
    if (verdict) return verdict;
  }
  return null;
}
