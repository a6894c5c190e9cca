import { describe, expect, it } from 'vitest';
import { GraphQLInt, GraphQLObjectType, GraphQLSchema, GraphQLString, parse, type ExecutionResult } from 'graphql';
import { subscribeShared } from '../src/pipeline/shared-events.js';
import type { Principal } from '../src/access/principal.js';

// Subscribers of one document, with the same variables and caller, share each event's execution
// (src/pipeline/shared-events.ts); anything that can change a result (variables, operation, caller, X-IdpScopes)
// keeps them apart. A resolver of the test's own schema counts how often it runs.

interface Event {
  n: number;
}

function harness() {
  const listeners = new Set<(event: Event) => void>();
  let runs = 0;
  const EventType = new GraphQLObjectType({
    name: 'Event',
    fields: {
      n: { type: GraphQLInt },
      label: {
        type: GraphQLString,
        args: { prefix: { type: GraphQLString } },
        resolve: (event: Event, args: { prefix?: string | null }) => {
          runs += 1;
          return `${args.prefix ?? ''}${event.n}`;
        },
      },
    },
  });
  const schema = new GraphQLSchema({
    query: new GraphQLObjectType({
      name: 'Query',
      fields: { ok: { type: GraphQLInt, resolve: () => 1 } },
    }),
    subscription: new GraphQLObjectType({
      name: 'Subscription',
      fields: {
        changed: {
          type: EventType,
          args: { fail: { type: GraphQLInt } },
          subscribe: (_root, args: { fail?: number | null }) => {
            if (args.fail === 1) throw new Error('refused by the resolver');
            return follow();
          },
          resolve: (event: Event) => event,
        },
      },
    }),
  });
  async function* follow(): AsyncGenerator<Event> {
    const queue: Event[] = [];
    let wake: (() => void) | undefined;
    const listener = (event: Event) => {
      queue.push(event);
      wake?.();
    };
    listeners.add(listener);
    try {
      for (;;) {
        while (queue.length) yield queue.shift()!;
        await new Promise<void>((resolve) => (wake = resolve));
      }
    } finally {
      listeners.delete(listener);
    }
  }
  const principal = (id: string): Principal => ({
    kind: 'key',
    id,
    name: id,
    scopes: ['tasks:read'],
    systemId: null,
    idpConsent: null,
    personOid: null,
    expiresAt: null,
  });
  return {
    get runs() {
      return runs;
    },
    /** Every subscriber is handed the same event object, as a feed does. */
    emit: (n: number) => {
      const event = { n };
      for (const listener of listeners) listener(event);
    },
    subscribe: async (
      query: string,
      options: {
        variables?: Record<string, unknown>;
        caller?: string;
        idpScopes?: string;
      } = {},
    ) => {
      const stream = await subscribeShared({
        schema,
        document: documents.get(query) ?? documents.set(query, parse(query)).get(query)!,
        variableValues: options.variables ?? {},
        contextValue: {
          principal: options.caller ? principal(options.caller) : null,
          idpScopes: options.idpScopes ?? null,
        },
      });
      return stream as AsyncIterableIterator<ExecutionResult> | ExecutionResult;
    },
  };
}

/** As the documents cache does: one document object per text. */
const documents = new Map<string, ReturnType<typeof parse>>();

const LABEL = 'subscription ($p: String) { changed { n label(prefix: $p) } }';

async function nextOf(stream: AsyncIterableIterator<ExecutionResult> | ExecutionResult): Promise<ExecutionResult> {
  const step = await (stream as AsyncIterableIterator<ExecutionResult>).next();
  return step.value as ExecutionResult;
}

describe('subscription events executed once per kind of subscriber', () => {
  it('100 subscribers of one document, variables and caller: one execution per event, each gets the result', async () => {
    const h = harness();
    const streams = await Promise.all(Array.from({ length: 100 }, () => h.subscribe(LABEL, { variables: { p: '#' }, caller: 'k1' })));
    for (const n of [1, 2]) {
      const pending = streams.map(nextOf);
      h.emit(n);
      for (const result of await Promise.all(pending)) expect(result).toEqual({ data: { changed: { n, label: `#${n}` } } });
    }
    expect(h.runs).toBe(2);
    await Promise.all(streams.map((s) => (s as AsyncIterableIterator<ExecutionResult>).return?.()));
  });

  it('other variables, another caller, other X-IdpScopes or another document each run their own', async () => {
    const h = harness();
    const streams = [
      await h.subscribe(LABEL, { variables: { p: '#' }, caller: 'k1' }),
      await h.subscribe(LABEL, { variables: { p: '#' }, caller: 'k1' }),
      await h.subscribe(LABEL, { variables: { p: '>' }, caller: 'k1' }),
      await h.subscribe(LABEL, { variables: { p: '#' }, caller: 'k2' }),
      await h.subscribe(LABEL, {
        variables: { p: '#' },
        caller: 'k1',
        idpScopes: 'openid',
      }),
      await h.subscribe(`${LABEL} `, { variables: { p: '#' }, caller: 'k1' }),
    ];
    const pending = streams.map(nextOf);
    h.emit(7);
    const results = await Promise.all(pending);
    expect(results.map((r) => (r.data as { changed: { label: string } }).changed.label)).toEqual(['#7', '#7', '>7', '#7', '#7', '#7']);
    expect(h.runs).toBe(5);
  });

  it('refusals are answered, not streamed: variables that do not coerce (400) and a subscribe resolver that throws', async () => {
    const h = harness();
    const badVariable = (await h.subscribe(LABEL, {
      variables: { p: 5 },
    })) as ExecutionResult;
    expect(badVariable.errors?.[0]?.extensions).toMatchObject({
      code: 'BAD_USER_INPUT',
      http: { status: 400 },
    });
    const thrown = (await h.subscribe('subscription { changed(fail: 1) { n } }')) as ExecutionResult;
    expect(thrown.errors?.[0]?.message).toBe('refused by the resolver');
    expect(h.runs).toBe(0);
  });
});
