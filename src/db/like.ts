// Prisma's `contains`, `startsWith` and `endsWith` put the text between LIKE wildcards as it is: a `%` or `_` in it
// would match anything, a `\` would escape what follows. Every search the gateway offers is for literal text, so
// each of those filters takes its text through here. (SQL of our own in src/db/sql uses starts_with/strpos instead,
// which have no wildcards.)

/** `text` as a LIKE pattern that matches only itself: `%`, `_` and `\` escaped by PostgreSQL's default escape, `\`. */
export function likeLiteral(text: string): string {
  return text.replace(/[\\%_]/g, '\\$&');
}
