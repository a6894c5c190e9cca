import { existsSync, readFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { makeAsset, type Asset } from '../static-assets.js';
import { PROJECT_ROOT } from '../../kit/project-root.js';

// The operator console's files: console/dist/, made by scripts/build-console.mjs (Vite) from console/. The same
// path from src/edge/console/ and from dist/edge/console/ (the build keeps the tree one level down). Vite names each
// asset by a hash of its content (index-<hash>.js), so they are served as immutable; the page names the current ones.
// Beside them, the build leaves the console's manifest of trusted documents (persisted-documents.json): every
// operation the console sends, by id, which the gateway trusts whenever it serves the console.

/** Where the console is served. */
export const CONSOLE_PATH = '/console';
export const CONSOLE_ASSET_PREFIX = `${CONSOLE_PATH}/assets/`;
export const CONSOLE_DIST = join(PROJECT_ROOT, 'console/dist');
/** The console's documents (codegen's persisted-documents.json, copied by scripts/build-console.mjs). */
export const CONSOLE_MANIFEST_FILE = 'persisted-documents.json';

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
  '.ico': 'image/x-icon',
};

export interface ConsoleAssets {
  /** index.html as Vite wrote it: it names the current script and styles. */
  readonly page: string;
  readonly byPath: ReadonlyMap<string, Asset>;
  /** The text of the build's manifest of trusted documents; null for a build that left none. */
  readonly manifest: string | null;
}

/** The built console's manifest (path and text), read at start-up with the other manifests; null when not built. */
export function readConsoleManifest(dir = CONSOLE_DIST): { path: string; text: string } | null {
  const path = join(dir, CONSOLE_MANIFEST_FILE);
  return existsSync(path) ? { path, text: readFileSync(path, 'utf8') } : null;
}

/** The built console, or null when console/dist/ has not been built (`npm run build` makes it). */
export async function loadConsoleAssets(dir = CONSOLE_DIST): Promise<ConsoleAssets | null> {
  if (!existsSync(join(dir, 'index.html'))) return null;
  const page = await readFile(join(dir, 'index.html'), 'utf8');
  const assetsDir = join(dir, 'assets');
  const names = existsSync(assetsDir) ? await readdir(assetsDir) : [];
  const assets = await Promise.all(
    names.map(async (name) => makeAsset(`${CONSOLE_ASSET_PREFIX}${name}`, TYPES[extname(name)] ?? 'application/octet-stream', await readFile(join(assetsDir, name)))),
  );
  const manifestPath = join(dir, CONSOLE_MANIFEST_FILE);
  const manifest = existsSync(manifestPath) ? await readFile(manifestPath, 'utf8') : null;
  return { page, byPath: new Map(assets.map((a) => [a.path, a])), manifest };
}
