// The server as `npm start` and the image run it: tsc's dist/main.js and everything it imports, dependencies
// included, bundled by esbuild into dist/server/ (an entry, main.js, and chunks shared with what it imports on
// demand). A restart then loads a few dozen files instead of ~1,400 modules resolved one by one through
// node_modules (docs/performance.md, "Start"). dist/ stays as tsc wrote it: `node dist/main.js` runs the same code
// unbundled, and files loaded on their own (the CMS verifier's worker module) are read from there.
// Left outside the bundle: packages that find their own files next to their modules at run time (PGlite's
// WebAssembly and data files, the schema engine's WebAssembly, imported as a module).
// dist/server/ sits two folders below the project, as src/kit/project-root.ts (the one module that computes where
// the project is) expects.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';

export const SERVER_DIR = 'dist/server';

/** Packages the bundle imports from node_modules at run time instead of containing them. */
export const EXTERNAL_PACKAGES = ['@electric-sql/pglite', '@prisma/schema-engine-wasm'];

// CommonJS dependencies inside an ES module bundle still call require() (for Node's built-ins among others).
const CJS_SHIM = "import { createRequire as __gatewayCreateRequire } from 'node:module'; const require = __gatewayCreateRequire(import.meta.url);";

export async function bundleServer(root) {
  const outdir = join(root, SERVER_DIR);
  rmSync(outdir, { recursive: true, force: true });
  const result = await build({
    absWorkingDir: root,
    entryPoints: { main: join(root, 'dist/main.js') },
    outdir,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node24',
    external: EXTERNAL_PACKAGES,
    banner: { js: CJS_SHIM },
    logLevel: 'warning',
    // Stack traces in an operator's log keep the functions' names.
    keepNames: true,
  });
  if (result.errors.length) throw new Error(`bundling the server failed: ${result.errors.map((e) => e.text).join('; ')}`);
}
