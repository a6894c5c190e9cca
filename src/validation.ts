import { z } from 'zod';
import { ValidationError, type FieldIssue } from './errors.js';

/** Turns zod issues into field issues named by their dotted path, so every offending field is reported at once. */
export function toFieldIssues(error: z.ZodError, prefix = ''): FieldIssue[] {
  const name = (path: PropertyKey[]) => [prefix, ...path.map(String)].filter(Boolean).join('.') || '(root)';
  return error.issues.flatMap((issue) =>
    issue.code === 'unrecognized_keys'
      ? issue.keys.map((key) => ({ field: name([...issue.path, key]), message: 'is not a known field' }))
      : [{ field: name(issue.path), message: issue.message }],
  );
}

/** Parses input at an edge; throws ValidationError naming every bad field. */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown, prefix = ''): z.output<S> {
  const result = schema.safeParse(input);
  if (!result.success) throw new ValidationError(toFieldIssues(result.error, prefix));
  return result.data;
}

/** What PostgreSQL cannot store in text or jsonb: the NUL character. */
export const NUL_MESSAGE = 'must not contain the NUL character (U+0000)';
/** Nor a UTF-16 surrogate without its pair (JSON "\\ud800" alone): jsonb refuses it, text would store U+FFFD instead. */
export const LONE_SURROGATE_MESSAGE = 'must not contain a lone UTF-16 surrogate (U+D800-U+DFFF without its pair)';
/** Deepest nesting of objects and arrays in a client's value, counted from the params, body or variables object (level 0). */
export const MAX_JSON_DEPTH = 64;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
export const TOO_DEEP_MESSAGE = `nests objects and arrays more than ${MAX_JSON_DEPTH} levels deep`;

/**
 * The one storable-input rule of every door (legacy JSON-RPC and REST, /graphql, graphql-ws): field issues for every
 * string (value or key) under `value` holding U+0000 or a lone surrogate, and for a value nesting objects and arrays
 * deeper than MAX_JSON_DEPTH (serializing it would overflow the stack), named by dotted path. The walk never goes
 * deeper than that bound, so a hostile value costs at most its size.
 */
export function storableInputIssues(value: unknown, path: string): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const text = (s: string, at: string) => {
    if (s.includes('\u0000')) issues.push({ field: at, message: NUL_MESSAGE });
    if (LONE_SURROGATE.test(s)) issues.push({ field: at, message: LONE_SURROGATE_MESSAGE });
  };
  const walk = (v: unknown, at: string, depth: number) => {
    if (typeof v === 'string') return text(v, at);
    if (v === null || typeof v !== 'object') return;
    if (depth >= MAX_JSON_DEPTH) return void issues.push({ field: at || '(root)', message: TOO_DEEP_MESSAGE });
    for (const k in v) {
      if (!Object.hasOwn(v, k)) continue;
      const childPath = at ? `${at}.${k}` : k;
      text(k, childPath);
      walk((v as Record<string, unknown>)[k], childPath, depth + 1);
    }
  };
  walk(value, path, 0);
  return issues;
}

/** Whether `issues` include a value too deep to hand to anything recursive (a zod rule, a serializer). */
export function hasTooDeep(issues: readonly FieldIssue[]): boolean {
  return issues.some((issue) => issue.message === TOO_DEEP_MESSAGE);
}

/** The instants the database stores faithfully: years 0001 to 9999 (ISO 8601 without extended years). */
export const INSTANT_RANGE_MESSAGE = 'must be between 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z';

export function isStorableInstant(date: Date): boolean {
  const year = date.getUTCFullYear();
  return !Number.isNaN(date.getTime()) && year >= 1 && year <= 9999;
}

/** A date-time (ISO 8601 text or a Date) the database can store. */
export const storableDate = (message: string) => z.coerce.date({ error: message }).refine(isStorableInstant, INSTANT_RANGE_MESSAGE);

/**
 * A rule that depends on configured limits, built once per set of limits: resolvers ask for it on every request,
 * and building a zod schema costs more than parsing with it (a page of 50 queues: ~5% of the request).
 */
export function builtOncePerLimits<A extends readonly (string | number)[], R>(build: (...limits: A) => R): (...limits: A) => R {
  const built = new Map<string, R>();
  return (...limits) => {
    const key = limits.join('/');
    let rule = built.get(key);
    if (rule === undefined) built.set(key, (rule = build(...limits)));
    return rule;
  };
}
