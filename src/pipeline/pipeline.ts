import { getOperationAST, type DocumentNode, type ExecutionArgs, type ExecutionResult, type GraphQLError, type GraphQLSchema } from 'graphql';
import { normalizedExecutor } from '@graphql-tools/executor';
import { createGraphQLError, isAsyncIterable } from '@graphql-tools/utils';
import type { GatewayMetrics } from '../kit/metrics.js';
import { callerRefusalError, unauthenticatedRefusal } from './access.js';
import { answersWithStatus, type CallerContext, type RequestContext } from './request-context.js';
import { executeCompiled } from './compiled.js';
import { subscribeShared } from './shared-events.js';
import { resultWithinDeadline } from './deadline.js';
import { firstRefusal, type OperationGuard } from './guards.js';
import { operationShape, refusal } from './operation.js';
import type { Documents } from './documents.js';
import type { Principal } from '../access/principal.js';
import type { CredentialWatch } from '../access/credential-watch.js';
import { bearerChallenge, insufficientScope } from '../access/bearer-challenge.js';
import type { SubscriberConnection, SubscriptionRegistry } from '../events/subscription-registry.js';
import { namedDocument, operationNameRefusal, type GraphQLParams } from './params.js';
import { documentNotFound, documentRequired, type TrustedDocuments } from './trusted-documents.js';

// One pipeline for every operation, whatever door it came in by (a JSON POST on node:http, Yoga's GET, SSE and
// multipart, graphql-ws, a legacy path): caller -> document (a trusted document's id, or a text the caller may send)
// -> guards -> execute -> mask -> observe. The edges (src/edge/) digest their request once into a RequestContext
// (src/pipeline/request-context.ts), call `handle`, and render what it returns in their transport; nothing here
// knows HTTP beyond the status an error should carry when the answer has one.

/** What an operation span needs to know of the operation it wraps. */
export interface TracedOperation {
  type: string;
  name: string;
  requestId: string | undefined;
}
export type OperationTracer = (operation: TracedOperation, run: () => Promise<OperationOutcome>) => Promise<OperationOutcome>;

export interface PipelineParts {
  schema: GraphQLSchema;
  auth: 'on' | 'off';
  documents: Documents;
  /** The trusted documents a request may name by id, and which callers may run only those (TRUSTED_DOCUMENTS). */
  trusted: TrustedDocuments;
  /** Services and whatever else every operation's context holds. */
  services: Record<string, unknown>;
  guards: readonly OperationGuard[];
  /** Starts timing an operation; the returned function counts its outcome. */
  observe(args: { schema: GraphQLSchema; document: DocumentNode; operationName?: string | null | undefined }): (result: ExecutionResult | undefined) => void;
  /** Counts a subscription that started. */
  subscribed(args: { schema: GraphQLSchema; document: DocumentNode; operationName?: string | null | undefined }): void;
  metrics?: GatewayMetrics | undefined;
  /** Open subscriptions: the per-key cap, the bound on a slow client, their access lines (src/events/subscription-registry.ts). */
  subscriptions?: SubscriptionRegistry | undefined;
  /** Ends what a credential opened when it stops being valid (src/access/credential-watch.ts). */
  credentials?: CredentialWatch | undefined;
  /** Error masking (an error the client may not see becomes "Unexpected error." and is logged). */
  mask(error: unknown): GraphQLError;
  /** Runs of a document before it is compiled (GRAPHQL_JIT_AFTER_RUNS). */
  compileAfter: number;
  /** REQUEST_DEADLINE_MS (0: none); subscriptions have no end, and no deadline. */
  deadlineMs: number;
  /** With tracing on, the operation's span around its execution; the same executor runs either way. */
  trace?: OperationTracer | undefined;
}

/** A request whose document parsed and validated, ready to run. */
export interface PreparedOperation {
  document: DocumentNode;
  query: string;
  variables: Record<string, unknown>;
  operationName: string | undefined;
  /** The chosen operation's name, or "anonymous" (spans and access lines name it so). */
  label: string;
  type: 'query' | 'mutation' | 'subscription';
}

export type OperationOutcome = ExecutionResult | AsyncIterable<ExecutionResult>;

/** What `handle` made of a request: each edge renders it in its transport (graphql-ws tells the stages apart). */
export type Handled =
  | { stage: 'refused'; result: ExecutionResult }
  | { stage: 'invalid'; result: ExecutionResult }
  | { stage: 'ran'; prepared: PreparedOperation | undefined; outcome: OperationOutcome };

/** The result or stream a handled request answers with. */
export const outcomeOf = (handled: Handled): OperationOutcome => (handled.stage === 'ran' ? handled.outcome : handled.result);

export interface Pipeline {
  readonly schema: GraphQLSchema;
  /**
   * The caller verdict as a GraphQL result (AUTH=on without a valid key; repeated caller headers), for an edge that
   * must refuse before it reads the rest of the request; null: admitted. `handle` asks it again (it is reached once).
   */
  admit(request: RequestContext): Promise<ExecutionResult | null>;
  /**
   * The document step: the trusted document the request names, or its text when its caller may send one; parsed,
   * one operation chosen (HTTP rules for GET), validated; or the request's errors.
   */
  prepare(params: GraphQLParams, request: RequestContext): Promise<PreparedOperation | ExecutionResult>;
  /** Guards, execution (within the deadline), masking and metrics. */
  execute(prepared: PreparedOperation, request: RequestContext, options?: { variablesFromRoute?: boolean }): Promise<OperationOutcome>;
  /** All of it, for one request: caller verdict -> document step -> guards, execution, masking. */
  handle(params: GraphQLParams, request: RequestContext): Promise<Handled>;
  /** A legacy route's own document (parsed once, valid), with variables its rule made: coerced once, compiled. */
  runRoute(request: RequestContext, document: DocumentNode, query: string, variables: Record<string, unknown>): Promise<ExecutionResult>;
  /** The masking every error a client sees goes through. */
  mask(error: unknown): GraphQLError;
}

const isPrepared = (value: PreparedOperation | ExecutionResult): value is PreparedOperation => 'document' in value;
export { isPrepared };

/** graphql-js's executor, for what does not run compiled. */
const executeUncompiled = async (args: ExecutionArgs): Promise<ExecutionResult> => {
  const result = await normalizedExecutor(args);
  if (isAsyncIterable(result)) throw new Error('a query or mutation returned a stream');
  return result;
};

/**
 * A subscription's results masked, and an error its source throws (a read meeting an outage) sent as one last masked
 * result, as envelop's masking did: a client learns why its stream ended. `return` goes straight to the source, so an
 * unsubscribe never waits for the next event.
 */
function maskedStream(stream: AsyncIterable<ExecutionResult>, masked: (result: ExecutionResult) => ExecutionResult, mask: (error: unknown) => GraphQLError): AsyncIterableIterator<ExecutionResult> {
  const source = stream[Symbol.asyncIterator]();
  let ended = false;
  const DONE: IteratorResult<ExecutionResult> = { done: true, value: undefined };
  return {
    async next() {
      if (ended) return DONE;
      try {
        const step = await source.next();
        if (step.done) ended = true;
        return step.done ? DONE : { done: false, value: masked(step.value) };
      } catch (error) {
        ended = true;
        return { done: false, value: { errors: [mask(error)] } };
      }
    },
    async return() {
      ended = true;
      await source.return?.();
      return DONE;
    },
    async throw(error: unknown) {
      ended = true;
      await source.return?.();
      throw error;
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}

export function createPipeline(parts: PipelineParts): Pipeline {
  const { schema, documents, guards, trusted } = parts;

  async function admit(request: RequestContext): Promise<ExecutionResult | null> {
    const refused = await request.admission();
    return refused ? { errors: [callerRefusalError(refused, answersWithStatus(request))] } : null;
  }

  /** The text the request runs: its trusted document's, or its own when its caller may send one. */
  async function sourceOf(params: GraphQLParams, request: RequestContext): Promise<{ text: string } | { error: GraphQLError }> {
    const named = namedDocument(params);
    if (named && 'error' in named) return named;
    if (named) {
      const text = trusted.text(named.id);
      if (text !== undefined) return { text };
      parts.metrics?.rejected.inc({ reason: 'persisted_document' });
      return { error: documentNotFound(named.id) };
    }
    // The caller is asked only when some kind of caller is held to the manifests (it is known by now on every door).
    if (trusted.restricts) {
      const kind = (await request.caller()).callerKind;
      if (trusted.listedOnly(kind)) {
        parts.metrics?.rejected.inc({ reason: 'persisted_document' });
        return { error: documentRequired(kind) };
      }
    }
    return { text: params.query ?? '' };
  }

  async function prepare(params: GraphQLParams, request: RequestContext): Promise<PreparedOperation | ExecutionResult> {
    const badName = operationNameRefusal(params.operationName);
    if (badName) return { errors: [badName] };
    const source = await sourceOf(params, request);
    if ('error' in source) return { errors: [source.error] };
    const parsed = documents.parsed(source.text);
    if ('error' in parsed) return { errors: [parsed.error] };
    const { document } = parsed;
    // An empty name is no name (a client that always sends the field).
    const operationName = typeof params.operationName === 'string' && params.operationName !== '' ? params.operationName : undefined;
    const operation = getOperationAST(document, operationName);
    // The operation must be known before anything runs (GraphQL over HTTP's wording, on every transport); a mutation
    // is never run by a GET.
    if (!operation) {
      return { errors: [createGraphQLError('Could not determine what operation to execute.', { extensions: { code: 'OPERATION_RESOLUTION_FAILURE', http: { status: 400 } } })] };
    }
    if (operation.operation === 'mutation' && request.method === 'GET') {
      return { errors: [createGraphQLError('Can only perform a mutation operation from a POST request.', { extensions: { http: { status: 405, headers: { Allow: 'POST' } }, code: 'BAD_REQUEST' } })] };
    }
    const invalid = documents.validationErrors(document);
    if (invalid.length) return { errors: invalid };
    return { document, query: source.text, variables: params.variables ?? {}, operationName, label: operation?.name?.value ?? 'anonymous', type: operation?.operation ?? 'query' };
  }

  function contextOf(request: RequestContext, caller: CallerContext, prepared: PreparedOperation): Record<string, unknown> {
    return {
      ...parts.services,
      headers: request.headers,
      httpStatus: answersWithStatus(request),
      params: { query: prepared.query, variables: prepared.variables, ...(prepared.operationName !== undefined && { operationName: prepared.operationName }) },
      requestId: request.id,
      log: request.log,
      ...caller,
    };
  }

  const masked = (result: ExecutionResult): ExecutionResult => (result.errors?.length ? { ...result, errors: result.errors.map(parts.mask) } : result);

  /**
   * A result refused whole by a resolver (no data, a FORBIDDEN error: a person-bound token reading another person, a
   * system-bound one another system) answers 403 over HTTP with the insufficient_scope challenge, as the scope guard's
   * refusal and the legacy paths do. A partial result keeps its 200: its data is the answer.
   */
  const refusedWhole = (result: ExecutionResult, request: RequestContext): ExecutionResult => {
    if (!answersWithStatus(request) || result.data != null || !result.errors) return result;
    const withStatus = (error: GraphQLError) => {
      const scopes = error.extensions.requiredScopes;
      const challenge = Array.isArray(scopes) ? insufficientScope(scopes as string[]) : bearerChallenge({ error: 'insufficient_scope' });
      const extensions = { ...error.extensions, http: { status: 403, headers: { 'WWW-Authenticate': challenge } } };
      return createGraphQLError(error.message, { nodes: error.nodes, source: error.source, positions: error.positions, path: error.path, extensions });
    };
    return { ...result, errors: result.errors.map((e) => (e.extensions?.code === 'FORBIDDEN' && !e.extensions.http ? withStatus(e) : e)) };
  };

  async function execute(prepared: PreparedOperation, request: RequestContext, { variablesFromRoute = false } = {}): Promise<OperationOutcome> {
    const traced = (run: () => Promise<OperationOutcome>) =>
      parts.trace
        ? parts.trace({ type: prepared.type, name: prepared.label, requestId: request.id }, run)
        : run();
    if (prepared.type === 'subscription') {
      const outcome = await traced(async () => {
        const args = await argsOf(prepared, request);
        const refused = await firstRefusal(guards, args);
        if (refused) return refused;
        const stream = await subscribeShared(args);
        if (!isAsyncIterable(stream)) return stream;
        parts.subscribed(args);
        return follow(maskedStream(stream, masked, parts.mask), args, request, prepared);
      });
      return isAsyncIterable(outcome) ? outcome : masked(outcome);
    }
    // The deadline covers the caller's key look-up and the guards too: each may wait on the database. So does the
    // span: a refused operation is traced as one.
    let done: ((result: ExecutionResult) => void) | undefined;
    const result = await resultWithinDeadline(parts.deadlineMs, () =>
      traced(async () => {
        const args = await argsOf(prepared, request);
        done = parts.observe(args);
        const refused = await firstRefusal(guards, args);
        if (refused) return refused;
        return executeCompiled(args, executeUncompiled, { variablesFromRoute, compileAfter: parts.compileAfter });
      }) as Promise<ExecutionResult>,
    );
    done?.(result);
    return refusedWhole(masked(result), request);
  }

  /** A stream as one open subscription of its client connection, bounded and counted; or its refusal (the stream ends). */
  function follow(stream: AsyncIterable<ExecutionResult>, args: ExecutionArgs & { contextValue: Record<string, unknown> }, request: RequestContext, prepared: PreparedOperation): OperationOutcome {
    const connection = parts.subscriptions && request.subscriber?.();
    if (!parts.subscriptions || !connection) return stream;
    const principal = args.contextValue.principal as Principal | null | undefined;
    const fields = operationShape(schema, prepared.document, prepared.operationName)?.rootFields.map((f) => f.name) ?? [];
    const followed = parts.subscriptions.follow(connection, { keyId: principal?.id ?? null, requestId: request.id, operationName: prepared.operationName ?? null, fields }, stream);
    if (!('refused' in followed)) {
      // An SSE stream is one subscription: it ends with its credential, with the refusal a new request would get as its
      // last event. A graphql-ws socket is held whole by its edge (src/edge/ws.ts), which closes it with 4403.
      if (principal && parts.credentials && connection.output.transport === 'sse') {
        const release = parts.credentials.hold(principal, (why) => followed.endWith({ errors: [unauthenticatedRefusal(why, false)] }));
        connection.output.onClose(release);
      }
      return followed;
    }
    parts.metrics?.rejected.inc({ reason: 'subscription_limit' });
    return { errors: [refusal(followed.message, followed.refused, answersWithStatus(request), { maxSubscriptions: followed.maxSubscriptions })] };
  }

  async function argsOf(prepared: PreparedOperation, request: RequestContext): Promise<ExecutionArgs & { contextValue: Record<string, unknown> }> {
    const contextValue = contextOf(request, await request.caller(), prepared);
    return { schema, document: prepared.document, variableValues: prepared.variables, contextValue, ...(prepared.operationName !== undefined && { operationName: prepared.operationName }) };
  }

  /** An error thrown outside the resolvers (a guard or the key look-up meeting an outage) is one masked error. */
  const orMasked = async (run: () => Promise<OperationOutcome>): Promise<OperationOutcome> => {
    try {
      return await run();
    } catch (error) {
      return { errors: [parts.mask(error)] };
    }
  };

  return {
    schema,
    admit,
    prepare,
    execute: (prepared, request, options) => orMasked(() => execute(prepared, request, options)),
    async handle(params, request) {
      try {
        const refused = await admit(request);
        if (refused) return { stage: 'refused', result: refused };
        const prepared = await prepare(params, request);
        if (!isPrepared(prepared)) return { stage: 'invalid', result: prepared };
        return { stage: 'ran', prepared, outcome: await orMasked(() => execute(prepared, request)) };
      } catch (error) {
        // An outage met before execution (the caller's key look-up): one masked error, as any the pipeline meets.
        return { stage: 'ran', prepared: undefined, outcome: { errors: [parts.mask(error)] } };
      }
    },
    async runRoute(request, document, query, variables) {
      const operation = getOperationAST(document);
      const prepared: PreparedOperation = { document, query, variables, operationName: undefined, label: operation?.name?.value ?? 'anonymous', type: operation?.operation ?? 'query' };
      const invalid = documents.validationErrors(document);
      if (invalid.length) return { errors: invalid };
      // Not masked here: an outage met on the way is answered by the legacy door in the path's own envelope.
      const outcome = await execute(prepared, request, { variablesFromRoute: true });
      if (isAsyncIterable(outcome)) throw new Error('a legacy route ran a subscription');
      return outcome;
    },
    mask: parts.mask,
  };
}
