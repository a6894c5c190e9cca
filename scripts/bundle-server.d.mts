/** Where the bundle is written, relative to the project. */
export const SERVER_DIR: string;
/** Packages the bundle imports from node_modules at run time instead of containing them. */
export const EXTERNAL_PACKAGES: readonly string[];
/** Bundles dist/main.js (tsc's output) and what it imports into dist/server/; throws when esbuild fails. */
export function bundleServer(root: string): Promise<void>;
