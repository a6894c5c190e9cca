// Preloaded into a gateway process (`--import`) by test/server-bundle.test.ts: every module Node loads from a file is
// written, one URL a line, to LOADED_MODULES_FILE when the process exits (its main thread's).
import { registerHooks } from 'node:module';
import { writeFileSync } from 'node:fs';
import { isMainThread } from 'node:worker_threads';

const loaded = new Set();
registerHooks({
  load(url, context, nextLoad) {
    if (url.startsWith('file:')) loaded.add(url);
    return nextLoad(url, context);
  },
});
if (isMainThread) process.on('exit', () => writeFileSync(process.env.LOADED_MODULES_FILE, [...loaded].join('\n')));
