import { z } from 'zod';
import type { JsonSchema } from './answer-shape.js';
import type { Field, ValueType } from './value-type.js';

// The routes' zod rules as JSON Schema: what a client may send (input), and what the mapping reads back (output).

const NEVER = { not: {} };

/**
 * What a client may send. A rule may accept JS values JSON cannot carry (a Date beside an ISO string, for callers
 * inside the process); those branches are dropped instead of widening the schema to "anything".
 */
export function inputSchema(rule: z.ZodType): JsonSchema {
  const schema = z.toJSONSchema(rule, {
    io: 'input',
    unrepresentable: 'any',
    target: 'draft-2020-12',
    override: (ctx) => {
      if (ctx.zodSchema._zod.def.type === 'date') Object.assign(ctx.jsonSchema, NEVER);
    },
  }) as JsonSchema;
  delete schema.$schema;
  return withoutNever(schema) as JsonSchema;
}

function isNever(value: unknown): boolean {
  return JSON.stringify(value) === JSON.stringify(NEVER);
}

function withoutNever(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutNever);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value)) out[key] = withoutNever(child);
  for (const union of ['anyOf', 'oneOf'] as const) {
    const branches = out[union];
    if (!Array.isArray(branches)) continue;
    const kept = branches.filter((b) => !isNever(b));
    if (kept.length === 1) {
      delete out[union];
      Object.assign(out, kept[0] as object);
    } else out[union] = kept;
  }
  return out;
}

/** The type of the validated value a mapping reads (`param(...)`): objects by their properties, the rest as given. */
export function outputType(rule: z.ZodType): ValueType {
  const schema = z.toJSONSchema(rule, { io: 'output', unrepresentable: 'any', target: 'draft-2020-12' }) as JsonSchema;
  delete schema.$schema;
  return fromJsonSchema(schema);
}

function fromJsonSchema(schema: JsonSchema): ValueType {
  const properties = schema.properties as Record<string, JsonSchema> | undefined;
  if (schema.type === 'object' && properties) {
    const required = new Set((schema.required as string[] | undefined) ?? []);
    const fields: Record<string, Field> = {};
    for (const [key, property] of Object.entries(properties)) fields[key] = { type: fromJsonSchema(property), optional: !required.has(key) };
    return { kind: 'object', fields, nullable: false };
  }
  if (Object.keys(schema).length === 0) return { kind: 'any' };
  return { kind: 'scalar', schema, nullable: false };
}
