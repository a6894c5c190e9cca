import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { PROJECT_ROOT as ROOT } from '../kit/project-root.js';

// Imported first by src/main.ts, before any module that needs the Node the project runs on: an older `node` (the
// system's, where the project's own is node_modules/.bin/node) would otherwise fail somewhere inside a dependency
// (`Unknown file extension ".wasm"` from the Prisma schema engine). Instead: one line naming the Node that runs, the
// one package.json's engines.node asks for, and how to run the project's own; exit 1. Node built-ins only, so that
// this module (and src/kit/project-root.ts) loads on any Node.

/** Without engines.node in package.json. */
const DEFAULT_RANGE = '>=24';

/** package.json's engines.node, or `>=24` when it has none (or cannot be read). */
export function requiredRange(packageJsonText: string | undefined): string {
  try {
    const range = (JSON.parse(packageJsonText ?? '') as { engines?: { node?: unknown } }).engines?.node;
    return typeof range === 'string' && /\d/.test(range) ? range : DEFAULT_RANGE;
  } catch {
    return DEFAULT_RANGE;
  }
}

const parts = (version: string): number[] => (version.match(/\d+/g) ?? []).slice(0, 3).map(Number);

/** Whether `version` (`20.20.2`) is at least the lowest version `range` allows (`>=24.5`, `^24.5.0`, `24.x`). */
export function isAtLeast(version: string, range: string): boolean {
  const have = parts(version);
  const need = parts(range);
  for (let i = 0; i < 3; i++) {
    const [h, n] = [have[i] ?? 0, need[i] ?? 0];
    if (h !== n) return h > n;
  }
  return true;
}

/** The operator's line for a Node that is too old, with the command line that runs the same on the project's Node. */
export function wrongNodeLine(running: string, range: string, argv: readonly string[], cwd: string): string {
  // Relative to where the operator is when that is inside the project, else absolute.
  const shown = (path: string) => (relative(cwd, path).startsWith('..') ? path : relative(cwd, path));
  const script = shown(argv[1] ?? join(ROOT, 'dist/main.js'));
  const args = argv.slice(2).join(' ');
  const own = script.endsWith('.ts') ? `npx tsx ${script}` : `${shown(join(ROOT, 'node_modules/.bin/node'))} ${script}`;
  return `This is Node ${running} and the gateway needs Node ${range} (package.json engines.node): run it through npm (\`npm start\`, \`npm run <script>\`), which runs the project's own Node, or as \`${own}${args ? ` ${args}` : ''}\`.`;
}

function readPackageJson(): string | undefined {
  try {
    return readFileSync(join(ROOT, 'package.json'), 'utf8');
  } catch {
    return undefined;
  }
}

const range = requiredRange(readPackageJson());
if (!isAtLeast(process.versions.node, range)) {
  process.stderr.write(`${wrongNodeLine(process.versions.node, range, process.argv, process.cwd())}\n`);
  process.exit(1);
}
