import type { PGliteOptions } from '@electric-sql/pglite';

/**
 * The PostgreSQL extensions the migrations create (pg_trgm: substring search over task names and errors), as every
 * embedded database must load them when it opens: PostgreSQL servers ship them, PGlite loads each from its own
 * package. Loaded with PGlite itself, never by a gateway on a PostgreSQL server.
 */
export async function pgliteExtensions(): Promise<NonNullable<PGliteOptions['extensions']>> {
  const { pg_trgm } = await import('@electric-sql/pglite/contrib/pg_trgm');
  return { pg_trgm };
}
