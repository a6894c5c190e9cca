import type { FieldNode, GraphQLResolveInfo, GraphQLSchema } from 'graphql';
import { queryFromInfo } from '@pothos/plugin-prisma';
import { Plan, setLoaderMappings } from '@pothos/selection-mapper';
// Not among the package's exports, and the one thing a plan needs besides its info: imported by its file, which is
// the same module the package's own planning uses (node_modules sits two levels above src/ and dist/ alike).
import { prismaAdapter, type PrismaPlayedPlan } from '../../node_modules/@pothos/plugin-prisma/esm/util/adapter.js';

// The Prisma query a field's selection asks for, planned once per document rather than once per request. Pothos plans
// a prismaField's query from its resolve info on every call: it walks the selection, runs each relation's `query`
// callback and records, on the request's context, which nested fields the query loads. For a document asked again
// and again (a client's own query with new variables) all of that comes out the same, unless the plan read the
// caller's context (a relation whose arguments depend on who asks: Organization.members) or a variable (a nested
// argument, an @include): such a plan is made per request, as Pothos makes it. A reused plan records its mappings on
// each request's own context, so the resolvers beneath find what the query loaded exactly as they would otherwise.

interface Reusable {
  readonly schema: GraphQLSchema;
  readonly parentType: string;
  readonly played: PrismaPlayedPlan;
}

/** Per field of a parsed document (documents are parsed once per text and cached): its plan, or `false` when it depends on the request. */
const plans = new WeakMap<FieldNode, Reusable | false>();

const counts = { planned: 0, reused: 0 };

/** How many queries were planned afresh and how many reused a document's plan, since the process started. */
export function plannedQueryCounts(): Readonly<typeof counts> {
  return { ...counts };
}

/**
 * The query of the prismaField `info` resolves, as Pothos' `queryFromInfo` plans it, with the loader mappings
 * recorded on `context`.
 */
export function plannedQuery<Query>(context: object, info: GraphQLResolveInfo): Query {
  const node = info.fieldNodes.length === 1 ? info.fieldNodes[0] : undefined;
  const known = node && plans.get(node);
  if (known && known.schema === info.schema && known.parentType === info.parentType.name) {
    counts.reused++;
    setLoaderMappings(context, info, known.played.mappings);
    return prismaAdapter.toQuery(known.played.root) as Query;
  }
  counts.planned++;
  if (!node || known === false) return planned(context, info);
  const reads = { context: false, variables: false };
  const plan = Plan.fromInfo(prismaAdapter, { context: watched(context, () => (reads.context = true)), info: { ...info, variableValues: watched(info.variableValues ?? {}, () => (reads.variables = true)) }, skipDeferredFragments: true });
  // A plan whose callbacks answered with a promise, or that selects nothing: left to Pothos, every time.
  if (!plan || typeof (plan as { then?: unknown }).then === 'function' || reads.context || reads.variables) {
    plans.set(node, false);
    return planned(context, info);
  }
  const played = plan.play();
  plans.set(node, { schema: info.schema, parentType: info.parentType.name, played });
  setLoaderMappings(context, info, played.mappings);
  return prismaAdapter.toQuery(played.root) as Query;
}

/** Pothos' own planning, for a field whose plan depends on the request. */
const planned = <Query>(context: object, info: GraphQLResolveInfo): Query => queryFromInfo({ context, info, awaitSelections: true }) as Query;

/** `target` with every read of a named property reported (symbol keys are the libraries' own bookkeeping). */
function watched<T extends object>(target: T, read: () => void): T {
  return new Proxy(target, {
    get(of, key, receiver) {
      if (typeof key === 'string') read();
      return Reflect.get(of, key, receiver);
    },
    has(of, key) {
      if (typeof key === 'string') read();
      return Reflect.has(of, key);
    },
    ownKeys(of) {
      read();
      return Reflect.ownKeys(of);
    },
    getOwnPropertyDescriptor(of, key) {
      if (typeof key === 'string') read();
      return Reflect.getOwnPropertyDescriptor(of, key);
    },
  });
}
