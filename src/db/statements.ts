import pg from 'pg';
import type { Prisma } from '../generated/prisma/client.js';
import { parseTextArray, parseUtcTimestamp, TEXT_ARRAY, TIMESTAMP } from './pg-text.js';

/**
 * The gateway's own SQL statements (src/db/sql) on the hot paths: on PostgreSQL they run on the pool Prisma itself
 * uses (same connections, same DATABASE_POOL_MAX, same prepared-statement names), without the Prisma client's raw
 * query pipeline, which costs ~75 us of CPU per call against ~45 us for the whole statement through node-postgres
 * (bench/ measurement in docs/decisions.md). Anywhere else (the embedded database, a Prisma transaction) a statement
 * runs through Prisma's $queryRawUnsafe, so a statement reads the same rows either way.
 */
export interface Statements {
  rows<T>(statement: Prisma.Sql): Promise<T[]>;
}

type Client = { $queryRawUnsafe<T>(query: string, ...values: unknown[]): Promise<T> };

const direct = new WeakMap<object, Statements>();

/** The statements of `db`: on the pool registered for it, else through Prisma. */
export function statementsOf(db: Client): Statements {
  return direct.get(db) ?? { rows: <T>(statement: Prisma.Sql) => db.$queryRawUnsafe<T[]>(statement.text, ...statement.values) };
}

// As Prisma reads them: a timestamp without time zone is UTC (node-postgres would take it as local time), a bigint is
// a BigInt (node-postgres gives a string).
const INT8 = 20;
const types = {
  getTypeParser: (oid: number, format?: string) =>
    format === 'binary'
      ? pg.types.getTypeParser(oid, 'binary')
      : oid === TIMESTAMP
        ? parseUtcTimestamp
        : oid === TEXT_ARRAY
          ? parseTextArray
          : oid === INT8
            ? BigInt
            : pg.types.getTypeParser(oid, 'text'),
};

/** Runs one statement, given its text (with `$n` parameters, no values). */
export type StatementWrapper = <T>(text: string, run: () => Promise<T[]>) => Promise<T[]>;
let wrapper: StatementWrapper | undefined;

/**
 * Tracing on (src/telemetry/tracing.ts): every statement on a registered pool runs inside `wrap` (its SQL span), as
 * Prisma's own statements run inside Prisma's spans. Set before the database is opened; off, nothing is asked per call.
 */
export function wrapStatements(wrap: StatementWrapper): void {
  wrapper = wrap;
}

/** Registers `pool` as where the statements of `db` run; `nameOf` names them as Prisma's own are named. */
export function registerPool(db: object, pool: pg.Pool, nameOf: (query: { sql: string }) => string): void {
  // node-postgres copies a query's config on every call, each own property by its descriptor (a slow copy): what the
  // calls of one named text share (text, name, type parsers) sits on a prototype made once per text, so only the
  // values are copied. Named texts are bounded (src/db/prepared-statements.ts); an unnamed one gets a plain config.
  const shared = new Map<string, { text: string; name: string; types: typeof types }>();
  const configOf = (text: string, values: unknown[]): pg.QueryConfig => {
    let common = shared.get(text);
    if (common === undefined) {
      const name = nameOf({ sql: text });
      if (!name) return { text, values, types };
      shared.set(text, (common = { text, name, types }));
    }
    const config = Object.create(common) as pg.QueryConfig;
    config.values = values;
    return config;
  };
  const run = async <T>(text: string, values: unknown[]): Promise<T[]> => {
    const result = await pool.query(configOf(text, values));
    return result.rows as T[];
  };
  const wrap = wrapper;
  direct.set(db, {
    rows: wrap ? <T>(statement: Prisma.Sql) => wrap(statement.text, () => run<T>(statement.text, statement.values)) : <T>(statement: Prisma.Sql) => run<T>(statement.text, statement.values),
  });
}
