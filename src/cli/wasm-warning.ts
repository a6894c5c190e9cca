// Node 24 warns, once a process, that importing WebAssembly as an ES module is experimental: the Prisma schema
// engine (@prisma/schema-engine-wasm) loads itself that way for every migrate, keys, import and serve. An operator
// can do nothing about it, so exactly that warning is dropped; every other one keeps Node's own output and flags
// (--no-warnings, --trace-warnings), which a 'warning' listener replacing Node's would lose.

const DROPPED = { type: 'ExperimentalWarning', message: 'Importing WebAssembly module instances is an experimental feature' };

export function isWasmImportWarning(warning: string | Error, typeOrOptions: unknown): boolean {
  const type = warning instanceof Error ? warning.name : typeof typeOrOptions === 'string' ? typeOrOptions : (typeOrOptions as { type?: unknown } | undefined)?.type;
  const message = warning instanceof Error ? warning.message : warning;
  return type === DROPPED.type && message.startsWith(DROPPED.message);
}

/** Call before anything imports the schema engine (src/main.ts does, first). */
export function dropWasmImportWarning(): void {
  const emitWarning = process.emitWarning;
  process.emitWarning = function (this: NodeJS.Process, warning: string | Error, ...rest: unknown[]): void {
    if (isWasmImportWarning(warning, rest[0])) return;
    Reflect.apply(emitWarning, this, [warning, ...rest]);
  } as typeof process.emitWarning;
}
