import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

// Where the project's files are, for code that reads them at run time (package.json, prisma/, console/dist/, the
// GraphiQL client, the verifier thread's module). One place, because the same code runs from three layouts: src/
// (tsx, vitest), dist/ (tsc's tree) and dist/server/ (the bundle `npm start` runs, scripts/bundle-server.mjs). This
// module sits two folders below the project in each (src/kit/, dist/kit/, dist/server/), which the bundle's build
// keeps true; a module elsewhere in the tree computing `../..` from its own place would not survive bundling.

export const PROJECT_ROOT = resolve(import.meta.dirname, '../..');

/** Whether this is the TypeScript source (tsx, vitest) rather than compiled JavaScript. */
export const RUNNING_SOURCE = import.meta.url.endsWith('.ts');

/**
 * A file of the code tree by its path below src/: the source itself when running it, else its compiled copy in dist/
 * (`.ts` -> `.js`; tsc's tree, which the bundle's build leaves in place for files loaded on their own, such as a
 * worker thread's module).
 */
export function codeFile(pathBelowSrc: string): string {
  return RUNNING_SOURCE ? join(PROJECT_ROOT, 'src', pathBelowSrc) : join(PROJECT_ROOT, 'dist', pathBelowSrc.replace(/\.ts$/, '.js'));
}

/** package.json's version, read when asked (the OpenAPI document, the tracing resource); throws when it cannot be read. */
export function projectVersion(): string {
  return (JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
}
