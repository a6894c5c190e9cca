import { setFlagsFromString } from 'node:v8';

// Imported first by the command line (src/main.ts), before any other module of the gateway is evaluated.
//
// V8 pretenures an allocation site (allocates its objects straight in the old generation) once most of its objects
// have survived a young collection. Under load the gateway's sites see both lives: a literal that is held for a while
// in one phase (a span waiting for its export batch, a document entering the cache) is allocated a moment later for a
// request that drops it at once. Once such a site is pretenured, every request's short-lived objects go to the old
// generation, and each young collection then keeps alive whatever those dead objects point to: whether a process fell
// into that state depended on the order its first minutes of traffic came in, and a process that did spent several
// times as long in each young collection (docs/performance.md, "Pretenuring"). Off, every object starts young; the
// few that live long are promoted by the collector as usual.

export const NO_PRETENURING = '--no-allocation-site-pretenuring';

/** V8 flags the operator gave on the command line (`node --allocation-site-pretenuring dist/main.js`) are kept. */
export function heapFlags(execArgv: readonly string[]): string[] {
  const chosen = execArgv.some((arg) => /^--(no-)?allocation[-_]site[-_]pretenuring(=|$)/.test(arg));
  return chosen ? [] : [NO_PRETENURING];
}

for (const flag of heapFlags(process.execArgv)) setFlagsFromString(flag);
