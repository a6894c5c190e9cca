import { DEFAULT_PREPARED_STATEMENTS } from '../config.js';

/**
 * Names for the statements Prisma sends to PostgreSQL, so that each pooled connection parses and plans a statement
 * once and then only binds and executes it (node-postgres keeps the names it prepared per connection, and a new
 * connection after a fault starts empty). Prisma's compiled queries are a fixed set of texts with `$n` parameters, so
 * a process meets few distinct texts; the first `limit` of them get a name and any later text stays unnamed (parsed
 * each time, as before), which bounds what each server connection holds without a cache to evict from.
 * `limit` 0 names nothing: for a pooler that cannot carry named statements across its connections.
 */
export function preparedStatementNames(limit: number): (query: { sql: string }) => string {
  const names = new Map<string, string>();
  return ({ sql }) => {
    let name = names.get(sql);
    if (name === undefined) {
      if (names.size >= limit) return '';
      name = `gw${names.size + 1}`;
      names.set(sql, name);
    }
    return name;
  };
}
