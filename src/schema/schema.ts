import { lexicographicSortSchema, printSchema, type GraphQLSchema } from 'graphql';
import { builder } from './builder.js';
import './common.js';
import './queues.js';
import './tasks.js';
import './identity.js';
import './signatures.js';
import './scheduler.js';
import './access.js';
import './notifications.js';

let built: GraphQLSchema | undefined;

/** The executable schema; each area's file registers its types on import. */
export function buildSchema(): GraphQLSchema {
  built ??= builder.toSchema({ sortSchema: true });
  return built;
}

/** The text of schema.graphql: what the contract file must equal. */
export function printContract(): string {
  return `${printSchema(lexicographicSortSchema(buildSchema()))}\n`;
}
