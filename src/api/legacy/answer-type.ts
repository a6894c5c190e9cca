import type { JsonValue, Shape } from './answer-shape.js';
import { isNullable, jsonTypeOfValue, jsonTypesOf, withNullable, type Field, type ValueType } from './value-type.js';

// Evaluates an answer declaration (answer-shape.ts) on types instead of values: given the type of what the mapping
// reads (the operation's data, the validated params), the type of what it returns. A declaration that names a field
// the document does not select, or maps something that is not a list, stops the generation with the route's name.

export interface AnswerSources {
  /** The root scope: the operation's `data`, or the failure of an error body. */
  data: ValueType;
  /** The validated params / input. */
  params: ValueType;
}

/** A type, whether the key holding it may be absent, and what the GraphQL field it was read from says of it. */
interface Typed {
  type: ValueType;
  optional: boolean;
  description?: string | undefined;
}

export function answerType(shape: Shape, sources: AnswerSources, where: string): ValueType {
  const result = new Evaluator(sources, where).typeOf(shape, [sources.data]);
  if (result.optional) throw new Error(`${where}: the answer itself may be undefined`);
  return result.type;
}

class Evaluator {
  constructor(
    private readonly sources: AnswerSources,
    private readonly where: string,
  ) {}

  private fail(message: string): never {
    throw new Error(`${this.where}: ${message}`);
  }

  /** `scopes[0]` is the innermost (the item being mapped), the last the root. */
  typeOf(shape: Shape, scopes: readonly ValueType[]): Typed {
    switch (shape.op) {
      case 'data': {
        const scope = scopes[shape.depth] ?? this.fail(`no scope ${shape.depth} levels out for ${shape.path.join('.')}`);
        return this.walk(scope, shape.path, 'data');
      }
      case 'param':
        return this.walk(this.sources.params, shape.path, 'params');
      case 'object': {
        const fields: Record<string, Field> = {};
        for (const [key, part] of Object.entries(shape.fields)) {
          const { type, optional, description } = this.typeOf(part, scopes);
          fields[key] = { type, optional, description };
        }
        return required({ kind: 'object', fields, nullable: false });
      }
      case 'merge': {
        const fields: Record<string, Field> = {};
        for (const part of shape.parts) {
          const { type } = this.typeOf(part, scopes);
          if (type.kind !== 'object' || type.nullable) this.fail('merge takes objects that are never null');
          for (const [key, field] of Object.entries(type.fields)) {
            delete fields[key]; // a later part's key takes the place the spread gives it: last
            fields[key] = field;
          }
        }
        return required({ kind: 'object', fields, nullable: false });
      }
      case 'omit': {
        const type = this.object(this.typeOf(shape.from, scopes).type, 'omit');
        for (const key of shape.keys) if (!(key in type.fields)) this.fail(`omit names ${key}, which is not there`);
        return required({ kind: 'object', fields: Object.fromEntries(Object.entries(type.fields).filter(([k]) => !shape.keys.includes(k))), nullable: false });
      }
      case 'present': {
        const type = this.object(this.typeOf(shape.from, scopes).type, 'present');
        const fields = Object.fromEntries(
          Object.entries(type.fields).map(([key, field]) => [
            key,
            isNullable(field.type) || field.optional ? { ...field, type: withNullable(field.type, false), optional: true } : field,
          ]),
        );
        return required({ kind: 'object', fields, nullable: false });
      }
      case 'within': {
        const source = this.typeOf(shape.source, scopes);
        const inner = this.typeOf(shape.shape, [withNullable(source.type, false), ...scopes]);
        return {
          type: isNullable(source.type) ? withNullable(inner.type, true) : inner.type,
          optional: source.optional || inner.optional,
          description: inner.description ?? source.description,
        };
      }
      case 'each': {
        const list = this.list(this.typeOf(shape.list, scopes), 'each');
        const item = this.typeOf(shape.item, [list.items, ...scopes]);
        if (item.optional) this.fail('each: an item may be undefined');
        return required({ kind: 'list', items: item.type, nullable: false });
      }
      case 'flatEach': {
        const list = this.list(this.typeOf(shape.list, scopes), 'flatEach');
        const inner = this.list(this.typeOf(shape.inner, [list.items, ...scopes]), 'flatEach');
        const item = this.typeOf(shape.item, [inner.items, list.items, ...scopes]);
        if (item.optional) this.fail('flatEach: an item may be undefined');
        return required({ kind: 'list', items: item.type, nullable: false });
      }
      case 'length':
        this.list(this.typeOf(shape.of, scopes), 'lengthOf');
        return required({ kind: 'scalar', schema: { type: 'integer', minimum: 0 }, nullable: false });
      case 'literal':
        return required(literalType(shape.value));
      case 'either':
        return required({ kind: 'enum', values: shape.values, nullable: false });
      case 'orElse': {
        const { type, description } = this.typeOf(shape.from, scopes);
        if (shape.fallback === null) return { type: withNullable(type, true), optional: false, description };
        const accepted = jsonTypesOf(type);
        const fallbackType = jsonTypeOfValue(shape.fallback);
        if (accepted && !accepted.has(fallbackType)) this.fail(`orElse: a ${fallbackType} fallback for a value of type ${[...accepted].join('|')}`);
        return { type: withNullable(type, false), optional: false, description };
      }
      case 'leftOut': {
        const { type, description } = this.typeOf(shape.from, scopes);
        if (shape.when === 'null') return { type: withNullable(type, false), optional: true, description };
        if (type.kind !== 'list') this.fail('leftOutWhenEmpty takes a list');
        return { type: { ...type, nullable: false, minItems: Math.max(1, type.minItems ?? 0) }, optional: true, description };
      }
      case 'relabel': {
        const from = this.typeOf(shape.from, scopes);
        if (from.type.kind !== 'enum') this.fail('relabel takes an enum');
        const values = [...new Set(from.type.values.map((v) => (typeof v === 'string' ? (shape.labels.get(v) ?? v) : v)))];
        return { type: { kind: 'enum', values, nullable: from.type.nullable }, optional: from.optional, description: from.description };
      }
      case 'named': {
        const inner = this.typeOf(shape.shape, scopes);
        if (inner.type.kind !== 'object' && inner.type.kind !== 'enum') this.fail(`named(${shape.name}) takes an object or an enum`);
        return { ...inner, type: { ...inner.type, name: shape.name, description: shape.description ?? inner.type.description } };
      }
      case 'computed':
        return required({ kind: 'scalar', schema: shape.schema, nullable: false, description: shape.description });
    }
  }

  /** Follows object keys; through a nullable object the result may be null, through an absent key undefined. */
  private walk(start: ValueType, path: readonly string[], root: string): Typed {
    let type = start;
    let nullable = false;
    let optional = false;
    let description: string | undefined;
    for (const [i, key] of path.entries()) {
      if (type.kind !== 'object') this.fail(`${root}.${path.slice(0, i).join('.')} is not an object, so it has no ${key}`);
      nullable ||= type.nullable;
      const field = type.fields[key] ?? this.fail(`${root}.${[...path.slice(0, i), key].join('.')} is not selected / declared`);
      optional ||= field.optional;
      type = field.type;
      description = field.description;
    }
    return { type: nullable ? withNullable(type, true) : type, optional, description };
  }

  private object(type: ValueType, what: string): Extract<ValueType, { kind: 'object' }> {
    if (type.kind !== 'object' || type.nullable) this.fail(`${what} takes an object that is never null`);
    return { ...type, name: undefined };
  }

  private list(typed: Typed, what: string): Extract<ValueType, { kind: 'list' }> {
    if (typed.type.kind !== 'list' || typed.type.nullable || typed.optional) this.fail(`${what} takes a list that is always there`);
    return typed.type;
  }
}

const required = (type: ValueType): Typed => ({ type, optional: false });

function literalType(value: JsonValue): ValueType {
  if (Array.isArray(value)) {
    const items = [...new Set(value.map((v) => JSON.stringify(v)))].map((v) => JSON.parse(v) as JsonValue);
    if (items.some((v) => typeof v === 'object')) throw new Error('literal lists hold scalars only');
    return {
      kind: 'list',
      items: { kind: 'enum', values: items as (string | number | boolean)[], nullable: false },
      nullable: false,
      minItems: value.length,
      maxItems: value.length,
    };
  }
  if (value !== null && typeof value === 'object') {
    return { kind: 'object', fields: Object.fromEntries(Object.entries(value).map(([k, v]) => [k, { type: literalType(v), optional: false }])), nullable: false };
  }
  const jsonType = value === null ? 'null' : typeof value === 'number' && Number.isInteger(value) ? 'integer' : typeof value;
  return { kind: 'scalar', schema: { type: jsonType, const: value }, nullable: false };
}
