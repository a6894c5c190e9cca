// What a legacy answer is made of, declared next to the function that makes it (a route's `result` / `respond`, an
// area's error body). The functions stay plain code; these declarations say where each part of their output comes
// from, so that src/api/legacy/openapi.ts derives the answer's JSON Schema from the GraphQL types the route's document
// selects instead of anyone writing the answer out by hand. test/openapi.test.ts checks every declaration against
// real answers.

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/** A JSON Schema fragment, for the few values a mapping makes itself (a time stamp, a reason phrase). */
export type JsonSchema = Record<string, unknown>;

export type Shape =
  | { op: 'data'; path: readonly string[]; depth: number }
  | { op: 'param'; path: readonly string[] }
  | { op: 'object'; fields: Readonly<Record<string, Shape>> }
  | { op: 'merge'; parts: readonly Shape[] }
  | { op: 'omit'; from: Shape; keys: readonly string[] }
  | { op: 'present'; from: Shape }
  | { op: 'within'; source: Shape; shape: Shape }
  | { op: 'each'; list: Shape; item: Shape }
  | { op: 'flatEach'; list: Shape; inner: Shape; item: Shape }
  | { op: 'length'; of: Shape }
  | { op: 'literal'; value: JsonValue }
  | { op: 'either'; values: readonly (string | number | boolean)[] }
  | { op: 'orElse'; from: Shape; fallback: JsonValue }
  | { op: 'leftOut'; from: Shape; when: 'null' | 'empty' }
  | { op: 'relabel'; from: Shape; labels: ReadonlyMap<string, string> }
  | { op: 'named'; name: string; description: string | undefined; shape: Shape }
  | { op: 'computed'; schema: JsonSchema; description: string };

/**
 * The value at `path` in the current scope: the operation's `data` (for an error body: the failure), or inside
 * `each` / `within` the item being mapped. No path: the scope itself.
 */
export const data = (...path: string[]): Shape => ({ op: 'data', path, depth: 0 });

/** The same, one scope out: inside `flatEach`'s item, the element of the outer list. */
export const outer = (...path: string[]): Shape => ({ op: 'data', path, depth: 1 });

/** A validated parameter (JSON-RPC `params`; for REST routes `path` / `query` / `headers` / `body` first). */
export const param = (...path: string[]): Shape => ({ op: 'param', path });

/** `{ key: value, ... }`, keys in this order; a key whose value may be undefined is optional. */
export const object = (fields: Record<string, Shape>): Shape => ({ op: 'object', fields });

/** `{ ...a, ...b }`: later parts win. */
export const merge = (...parts: Shape[]): Shape => ({ op: 'merge', parts });

/** `const { a, b, ...rest } = from`: the rest. */
export const omit = (from: Shape, ...keys: string[]): Shape => ({ op: 'omit', from, keys });

/** The object with its null fields left out (identity's `present`): those become optional, never null. */
export const present = (from: Shape): Shape => ({ op: 'present', from });

/** `source && shape`, with `shape` reading from `source`: null when the source is. */
export const within = (source: Shape, shape: Shape): Shape => ({ op: 'within', source, shape });

/** `list.map((x) => item)`, `item` reading from x. */
export const each = (list: Shape, item: Shape): Shape => ({ op: 'each', list, item });

/** `list.flatMap((x) => inner(x).map((y) => item))`: `item` reads y with `data`, x with `outer`. */
export const flatEach = (list: Shape, inner: Shape, item: Shape): Shape => ({ op: 'flatEach', list, inner, item });

/** `list.length`. */
export const lengthOf = (of: Shape): Shape => ({ op: 'length', of });

/** A constant the mapping writes (`['hasSize']`, `false`). */
export const literal = (value: JsonValue): Shape => ({ op: 'literal', value });

/** One of these constants, chosen by the mapping (`valid ? 'A' : 'B'`). */
export const either = (...values: (string | number | boolean)[]): Shape => ({ op: 'either', values });

/** `from ?? fallback`. */
export const orElse = (from: Shape, fallback: JsonValue): Shape => ({ op: 'orElse', from, fallback });

/** `...(from !== null && { key: from })`: the key is absent rather than null. */
export const leftOutWhenNull = (from: Shape): Shape => ({ op: 'leftOut', from, when: 'null' });

/** `...(from?.length && { key: from })`: the key is absent rather than an empty list. */
export const leftOutWhenEmpty = (from: Shape): Shape => ({ op: 'leftOut', from, when: 'empty' });

/** An enum's values renamed (`labels.get(v) ?? v`). */
export const relabel = (from: Shape, labels: ReadonlyMap<string, string>): Shape => ({ op: 'relabel', from, labels });

/** Published once under `name` in components.schemas (the spec's model names: ResponseError, CheckSignResponseDto). */
export const named = (name: string, shape: Shape, description?: string): Shape => ({ op: 'named', name, description, shape });

/** A value the mapping makes itself, from nothing a GraphQL type describes (`new Date().toISOString()`). */
export const computed = (schema: JsonSchema, description: string): Shape => ({ op: 'computed', schema, description });

/** What a JSON-RPC route's `result` function returns: the legacy `result`, and `rowsCount` on searches. */
export interface RpcAnswer {
  result: Shape;
  rowsCount?: Shape;
}

/** Domain refusals a REST route may answer beyond those of every door (400, 401, 403, 429, 500, 503). */
export type Refusal = 404 | 409;

/** What a REST route's `respond` and `errorBody` return. */
export interface HttpAnswer {
  /** The success status, 200 unless given. */
  status?: 200 | 201;
  body: Shape;
  /** Headers of the success (and 304) answer, with what each carries. */
  headers?: Readonly<Record<string, string>>;
  /** Answers 304 with no body when If-None-Match names the current version. */
  notModified?: boolean;
  refusals?: readonly Refusal[];
  /** The area's error body, made from the failure (`{status, code, message, fields?}`). */
  error: Shape;
}
