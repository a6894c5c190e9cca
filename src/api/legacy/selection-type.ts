import {
  GraphQLEnumType,
  GraphQLList,
  GraphQLNonNull,
  GraphQLObjectType,
  GraphQLScalarType,
  getNamedType,
  isAbstractType,
  isCompositeType,
  Kind,
  typeFromAST,
  type DocumentNode,
  type FragmentDefinitionNode,
  type GraphQLOutputType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';
import type { JsonSchema } from './answer-shape.js';
import type { Field, ValueType } from './value-type.js';

// The type of an operation's `data`, walked from its selection set against the schema: scalars to JSON types and
// formats, enums to their values, non-null to required and not null, lists to arrays. A selection that is exactly one
// fragment spread keeps the fragment's name, so the answers built from it share one component.

/** Every scalar of schema.graphql; a new one must be added here (an unknown scalar stops the document's generation). */
const SCALARS: Record<string, JsonSchema> = {
  String: { type: 'string' },
  ID: { type: 'string' },
  Int: { type: 'integer' },
  Float: { type: 'number' },
  Boolean: { type: 'boolean' },
  DateTime: { type: 'string', format: 'date-time' },
};

export function operationDataType(schema: GraphQLSchema, document: DocumentNode): ValueType {
  const operations = document.definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  if (operations.length !== 1) throw new Error(`a route's document must hold one operation, not ${operations.length}`);
  const operation = operations[0]!;
  const root = schema.getRootType(operation.operation);
  if (!root) throw new Error(`the schema has no ${operation.operation} type`);
  const fragments = new Map(
    document.definitions.filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION).map((f) => [f.name.value, f]),
  );
  return new SelectionWalker(schema, fragments).object(root, operation.selectionSet, false);
}

class SelectionWalker {
  constructor(
    private readonly schema: GraphQLSchema,
    private readonly fragments: ReadonlyMap<string, FragmentDefinitionNode>,
  ) {}

  object(type: GraphQLObjectType, selectionSet: SelectionSetNode, nullable: boolean): ValueType {
    const only = selectionSet.selections.length === 1 ? selectionSet.selections[0]! : undefined;
    const name = only?.kind === Kind.FRAGMENT_SPREAD ? only.name.value : undefined;
    const fields: Record<string, Field> = {};
    this.collect(type, selectionSet, fields, false);
    return { kind: 'object', name, fields, nullable, description: name ? type.description ?? undefined : undefined };
  }

  private collect(type: GraphQLObjectType, selectionSet: SelectionSetNode, into: Record<string, Field>, conditional: boolean): void {
    for (const selection of selectionSet.selections) {
      // @include / @skip may leave the key out.
      const maybe = conditional || (selection.directives?.length ?? 0) > 0;
      if (selection.kind === Kind.FIELD) {
        const key = selection.alias?.value ?? selection.name.value;
        if (selection.name.value === '__typename') {
          into[key] = { type: { kind: 'enum', values: [type.name], nullable: false }, optional: maybe };
          continue;
        }
        const field = type.getFields()[selection.name.value];
        if (!field) throw new Error(`${type.name} has no field ${selection.name.value}`);
        const value = this.output(field.type, selection.selectionSet, true);
        const earlier = into[key];
        // The same key selected twice (a fragment and the field itself) is one field; sub-selections merge.
        into[key] = {
          type: earlier?.type.kind === 'object' && value.kind === 'object' ? { ...value, name: undefined, fields: { ...earlier.type.fields, ...value.fields } } : value,
          optional: maybe && (earlier?.optional ?? true),
          description: field.description ?? undefined,
        };
        continue;
      }
      const condition = selection.kind === Kind.INLINE_FRAGMENT ? selection.typeCondition : this.fragment(selection.name.value).typeCondition;
      const conditionType = condition ? typeFromAST(this.schema, condition) : type;
      if (conditionType !== type) {
        throw new Error(`a fragment on ${condition?.name.value} inside ${type.name}: type conditions that narrow are not described yet`);
      }
      const set = selection.kind === Kind.INLINE_FRAGMENT ? selection.selectionSet : this.fragment(selection.name.value).selectionSet;
      this.collect(type, set, into, maybe);
    }
  }

  private fragment(name: string): FragmentDefinitionNode {
    const fragment = this.fragments.get(name);
    if (!fragment) throw new Error(`fragment ${name} is not in the document`);
    return fragment;
  }

  private output(type: GraphQLOutputType, selectionSet: SelectionSetNode | undefined, nullable: boolean): ValueType {
    if (type instanceof GraphQLNonNull) return this.output(type.ofType, selectionSet, false);
    if (type instanceof GraphQLList) return { kind: 'list', items: this.output(type.ofType, selectionSet, true), nullable };
    if (type instanceof GraphQLEnumType) {
      return { kind: 'enum', name: type.name, values: type.getValues().map((v) => v.name), nullable, description: type.description ?? undefined };
    }
    if (type instanceof GraphQLScalarType) {
      if (type.name === 'JSON') return { kind: 'any', description: type.description ?? undefined };
      const schema = SCALARS[type.name];
      if (!schema) throw new Error(`the scalar ${type.name} has no JSON Schema (add it to SCALARS in src/api/legacy/selection-type.ts)`);
      return { kind: 'scalar', schema, nullable };
    }
    if (isAbstractType(type)) throw new Error(`${type.name} is abstract: selections on interfaces and unions are not described yet`);
    if (!isCompositeType(type) || !selectionSet) throw new Error(`${getNamedType(type).name} needs a selection set`);
    return this.object(type as GraphQLObjectType, selectionSet, nullable);
  }
}
