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

/** Field issues for every string (value or key) under `value` that holds U+0000, named by dotted path. */
export function nulCharacterIssues(value: unknown, path: string): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const walk = (v: unknown, at: string, depth: number) => {
    if (typeof v === 'string') {
      if (v.includes('\u0000')) issues.push({ field: at, message: NUL_MESSAGE });
    } else if (v !== null && typeof v === 'object' && depth < 64) {
      for (const [k, child] of Object.entries(v)) {
        const childPath = at ? `${at}.${k}` : k;
        if (k.includes('\u0000')) issues.push({ field: childPath, message: NUL_MESSAGE });
        walk(child, childPath, depth + 1);
      }
    }
  };
  walk(value, path, 0);
  return issues;
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
