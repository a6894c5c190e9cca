import { isObjectType, type GraphQLField, type GraphQLFieldResolver, type GraphQLSchema } from 'graphql';
import { objectSlot } from '../kit/object-slot.js';

// Pothos' Prisma plugin finds what a parent's query preloaded for a field by the identity of the response path
// objects in resolve info: graphql-js shares the path of a parent field with its children, graphql-jit builds a new
// chain for every resolver call. Resolvers compiled for graphql-jit therefore get the request's one path object per
// response position, made here, so that the plugin meets the same objects graphql-js would give it.

interface Path {
  readonly prev: Path | undefined;
  readonly key: string | number;
  readonly typename: string | undefined;
  /** The positions below this one (kept on the path object, which lives as long as its request). */
  children: Map<PathKey, Path> | undefined;
}
type PathKey = Path['key'];

/** Per request (its context object): the root positions. */
const roots = objectSlot<object, Map<PathKey, Path>>('root paths');

function stablePath(context: object, path: { prev?: unknown; key: PathKey; typename?: string | undefined }): Path {
  const prev = path.prev ? stablePath(context, path.prev as Path) : undefined;
  let positions = prev ? prev.children : roots.get(context);
  if (!positions) {
    positions = new Map();
    if (prev) prev.children = positions;
    else roots.set(context, positions);
  }
  let stable = positions.get(path.key);
  if (!stable) {
    stable = { prev, key: path.key, typename: path.typename, children: undefined };
    positions.set(path.key, stable);
  }
  return stable;
}

const wrapped = new WeakMap<GraphQLFieldResolver<unknown, unknown>, GraphQLFieldResolver<unknown, unknown>>();

function withStablePath(resolve: GraphQLFieldResolver<unknown, unknown>): GraphQLFieldResolver<unknown, unknown> {
  let wrapper = wrapped.get(resolve);
  if (!wrapper) {
    wrapper = (source, args, context, info) => {
      // graphql-jit makes a new info object per call, so it is this call's own to change.
      (info as { path: unknown }).path = stablePath(context as object, info.path);
      return resolve(source, args, context, info);
    };
    wrapped.set(resolve, wrapper);
  }
  return wrapper;
}

/**
 * Runs `compile` while every resolver of `schema` is wrapped to see stable paths: graphql-jit takes each field's
 * resolver when it compiles, so the compiled function keeps the wrappers and graphql-js, which reads the schema on
 * every execution, keeps the resolvers as they were (they are put back before this returns).
 */
export function compiledWithStablePaths<T>(schema: GraphQLSchema, compile: () => T): T {
  const swapped: [GraphQLField<unknown, unknown>, GraphQLFieldResolver<unknown, unknown>][] = [];
  try {
    for (const type of Object.values(schema.getTypeMap())) {
      if (!isObjectType(type) || type.name.startsWith('__')) continue;
      for (const field of Object.values(type.getFields())) {
        if (!field.resolve) continue;
        swapped.push([field, field.resolve]);
        field.resolve = withStablePath(field.resolve);
      }
    }
    return compile();
  } finally {
    for (const [field, resolve] of swapped) field.resolve = resolve;
  }
}
