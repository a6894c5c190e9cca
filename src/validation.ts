import type { z } from 'zod';
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
