import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { getOperationAST, parse } from 'graphql';
import { CONSOLE_DIST, CONSOLE_MANIFEST_FILE } from '../../src/edge/console/assets.js';

/** The console's operations by document id (its manifest in console/dist/), to name what a page sent. */
export function consoleOperations(): Map<string, string> {
  const manifest = JSON.parse(readFileSync(join(CONSOLE_DIST, CONSOLE_MANIFEST_FILE), 'utf8')) as Record<string, string>;
  return new Map(Object.entries(manifest).map(([id, text]) => [id, getOperationAST(parse(text))?.name?.value ?? '?']));
}

/** The id of the console's operation `name`. */
export function consoleDocumentId(name: string): string {
  const found = [...consoleOperations()].find(([, operation]) => operation === name);
  if (!found) throw new Error(`the console's manifest has no operation ${name}`);
  return found[0];
}
