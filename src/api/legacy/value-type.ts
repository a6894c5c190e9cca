import type { JsonSchema } from './answer-shape.js';

// The type of a JSON value as the OpenAPI generator reasons about it: what a GraphQL selection yields, what an answer
// declaration (answer-shape.ts) makes of it, and finally its JSON Schema. Nullability is a flag here, so that
// transformations (present, orElse, within) can change it without taking schemas apart.

export type ValueType =
  | { kind: 'scalar'; schema: JsonSchema; nullable: boolean; description?: string | undefined }
  | { kind: 'enum'; name?: string | undefined; values: readonly (string | number | boolean)[]; nullable: boolean; description?: string | undefined }
  | { kind: 'object'; name?: string | undefined; fields: Readonly<Record<string, Field>>; nullable: boolean; description?: string | undefined }
  | { kind: 'list'; items: ValueType; nullable: boolean; minItems?: number; maxItems?: number; description?: string | undefined }
  /** Any JSON value, null included (the JSON scalar). */
  | { kind: 'any'; description?: string | undefined };

export interface Field {
  type: ValueType;
  /** The key may be absent. */
  optional: boolean;
  description?: string | undefined;
}

export function withNullable(type: ValueType, nullable: boolean): ValueType {
  return type.kind === 'any' ? type : { ...type, nullable };
}

export function isNullable(type: ValueType): boolean {
  return type.kind === 'any' || type.nullable;
}

/** The JSON types a value of `type` may have (`any`: all of them). */
export function jsonTypesOf(type: ValueType): Set<string> | undefined {
  const types = new Set<string>();
  switch (type.kind) {
    case 'any':
      return undefined;
    case 'object':
      types.add('object');
      break;
    case 'list':
      types.add('array');
      break;
    case 'enum':
      for (const v of type.values) types.add(typeof v === 'string' ? 'string' : typeof v === 'number' ? 'number' : 'boolean');
      break;
    case 'scalar': {
      const declared = type.schema.type;
      if (declared === undefined) return undefined;
      for (const t of Array.isArray(declared) ? declared : [declared]) types.add(t === 'integer' ? 'number' : String(t));
    }
  }
  if (type.nullable) types.add('null');
  return types;
}

export function jsonTypeOfValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

/** Named schemas collected while rendering; one name, one schema. */
export class Components {
  readonly schemas: Record<string, JsonSchema> = {};

  ref(name: string, schema: JsonSchema): JsonSchema {
    const existing = this.schemas[name];
    if (existing === undefined) this.schemas[name] = schema;
    else if (JSON.stringify(existing) !== JSON.stringify(schema)) throw new Error(`two different schemas are named ${name}`);
    return { $ref: `#/components/schemas/${name}` };
  }
}

/** The JSON Schema (2020-12, as OpenAPI 3.1 uses it) of `type`; named object and enum types become components. */
export function toJsonSchema(type: ValueType, components: Components): JsonSchema {
  if (type.kind === 'any') return { ...(type.description && { description: type.description }) };
  const name = type.kind === 'enum' || type.kind === 'object' ? type.name : undefined;
  if (name !== undefined) {
    const ref = components.ref(name, render({ ...type, nullable: false }, components));
    return type.nullable ? { oneOf: [ref, { type: 'null' }] } : ref;
  }
  return render(type, components);
}

function render(type: Exclude<ValueType, { kind: 'any' }>, components: Components): JsonSchema {
  const description = type.description ? { description: type.description } : {};
  const typed = (jsonType: unknown) => (type.nullable ? [...(Array.isArray(jsonType) ? jsonType : [jsonType]), 'null'] : jsonType);
  switch (type.kind) {
    case 'scalar': {
      if ('const' in type.schema && type.nullable) return { ...description, oneOf: [type.schema, { type: 'null' }] };
      return { ...description, ...type.schema, ...(type.schema.type !== undefined && { type: typed(type.schema.type) }) };
    }
    case 'enum': {
      const jsonTypes = [...new Set(type.values.map((v) => (typeof v === 'number' && Number.isInteger(v) ? 'integer' : typeof v)))];
      return { ...description, type: typed(jsonTypes.length === 1 ? jsonTypes[0] : jsonTypes), enum: type.nullable ? [...type.values, null] : [...type.values] };
    }
    case 'list':
      return {
        ...description,
        type: typed('array'),
        ...(type.maxItems !== 0 && { items: toJsonSchema(type.items, components) }),
        ...(type.minItems !== undefined && { minItems: type.minItems }),
        ...(type.maxItems !== undefined && { maxItems: type.maxItems }),
      };
    case 'object': {
      const properties: Record<string, JsonSchema> = {};
      const required: string[] = [];
      for (const [key, field] of Object.entries(type.fields)) {
        const schema = toJsonSchema(field.type, components);
        properties[key] = field.description && !schema.description ? { ...schema, description: field.description } : schema;
        if (!field.optional) required.push(key);
      }
      return { ...description, type: typed('object'), properties, ...(required.length && { required }) };
    }
  }
}
