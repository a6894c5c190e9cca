import * as nodeModule from 'node:module';

// A restart compiles the same ~1,400 modules as the last one did. Node keeps their V8 code on disk (NODE_COMPILE_CACHE,
// else its own folder under the system's temporary directory, keyed by Node version and file content) and reuses it:
// the gateway's modules are loaded after this runs (src/main.ts imports them on demand), so they all profit. A cache
// that cannot be written (a read-only disk) only costs the compile, as before; an operator's NODE_DISABLE_COMPILE_CACHE
// turns it off.

// Through the namespace: a Node too old to have it must still load this module far enough for src/cli/node-version.ts
// to name the versions.
nodeModule.enableCompileCache?.();
