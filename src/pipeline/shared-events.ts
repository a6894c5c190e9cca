import { createSourceEventStream, type DocumentNode, type ExecutionArgs, type ExecutionResult } from 'graphql';
import { buildExecutionContext, execute } from '@graphql-tools/executor';
import { createGraphQLError, isAsyncIterable, mapAsyncIterator } from '@graphql-tools/utils';
import type { Principal } from '../access/principal.js';
import { objectSlot } from '../kit/object-slot.js';

// A subscription's events are shared by everyone who follows the same key (src/events/live.ts hands every follower
// of a feed the same state object). What each subscriber makes of an event is its own execution of its selection
// with the event as root value; subscribers of one document, with the same variables and the same view of the data
// (the same caller: what resolvers may narrow by), would make the same result. So the first of them to take an event
// executes it and the others get that result: one execution per event and per kind of subscriber, not per subscriber.
// The result is shared read-only (masking copies what it changes), and lives as long as the event object does.

type Args = ExecutionArgs & { contextValue: Record<string, unknown> };

/** Per event object, per document object (the documents cache's one for its text), per kind of subscriber. */
const resultsByEvent = objectSlot<object, Map<DocumentNode, Map<string, Promise<ExecutionResult>>>>('results of the event');

/** Everything beside the event and the document that can make one subscriber's result differ from another's. */
function kindOf(args: Args): string {
  const principal = args.contextValue.principal as Principal | null | undefined;
  return JSON.stringify([
    args.operationName ?? null,
    args.variableValues ?? null,
    principal ? [principal.kind, principal.id, principal.scopes, principal.systemId, principal.idpConsent && [...principal.idpConsent], principal.personOid] : null,
    args.contextValue.idpScopes ?? null,
  ]);
}

function executedOnce(args: Args, kind: string, event: unknown): Promise<ExecutionResult> {
  const run = () => execute({ ...args, rootValue: event }) as Promise<ExecutionResult>;
  // Events that are not objects (a null state) cannot be told apart by identity, and cost little to execute.
  if (event === null || typeof event !== 'object') return run();
  let byDocument = resultsByEvent.get(event);
  // A plain Map: it lives as long as the event, and the documents it names outlive it anyway.
  if (!byDocument) resultsByEvent.set(event, (byDocument = new Map()));
  let byKind = byDocument.get(args.document);
  if (!byKind) byDocument.set(args.document, (byKind = new Map()));
  let result = byKind.get(kind);
  if (!result) byKind.set(kind, (result = run()));
  return result;
}

/**
 * The subscription's stream of results, each event executed once for every subscriber of the same kind; or the
 * errors that refuse it (its variables, its subscribe resolver), as @graphql-tools/executor's subscribe gives them.
 */
export async function subscribeShared(args: Args): Promise<AsyncIterable<ExecutionResult> | ExecutionResult> {
  const context = buildExecutionContext(args);
  if (!('schema' in context)) {
    for (const error of context) {
      const extensions = ((error as { extensions: Record<string, unknown> }).extensions ??= {});
      extensions['http'] = { ...(extensions['http'] as object | undefined), status: 400 };
      extensions['code'] = 'BAD_USER_INPUT';
    }
    return { errors: context };
  }
  const source = await createSourceEventStream(args);
  if (!isAsyncIterable(source)) return source;
  const kind = kindOf(args);
  return mapAsyncIterator(
    source as AsyncIterable<unknown>,
    (event) => executedOnce(args, kind, event),
    (error: unknown) => {
      // A source that fails (a read that cannot be retried) ends the stream with its error, placed at the operation.
      throw createGraphQLError((error as Error).message, { originalError: error as Error, nodes: [context.operation] });
    },
  );
}
