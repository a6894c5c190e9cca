// Before anything else: a Node older than package.json's engines.node gets one line saying so (src/cli/node-version.ts).
import './cli/node-version.js';
// Then: it sets V8 flags that hold only for objects allocated after them (src/runtime/heap-tuning.ts).
import './runtime/heap-tuning.js';
// Then: compiled code kept across restarts for every module loaded after it (src/cli/compile-cache.ts).
import './cli/compile-cache.js';
import { dropWasmImportWarning } from './cli/wasm-warning.js';
import { helpHint } from './cli/commands.js';
import { renderHelp } from './cli/help.js';
import { parseInvocation, type Invocation } from './cli/parse.js';
import { UsageError } from './cli/usage-error.js';

// The gateway's command line; the commands, their options and their help are the table in src/cli/commands.ts.

dropWasmImportWarning();

async function main(invocation: Invocation): Promise<void> {
  if (invocation.kind === 'help') {
    process.stdout.write(renderHelp(invocation.command));
    return;
  }
  await invocation.command.run(invocation.input);
}

/** The one or two lines a failure prints: an operator's mistake or a missing build step is a sentence, not a stack. */
function failureLines(error: unknown, invocation: Invocation | undefined): { lines: string[]; exitCode: number } {
  if (error instanceof UsageError) {
    const command = error.command !== undefined ? error.command : (invocation?.command ?? null);
    return { lines: [error.message, `Run \`${helpHint(command)}\` for help.`], exitCode: error.exitCode };
  }
  const code = (error as { code?: unknown } | null)?.code;
  if (code === 'ERR_MODULE_NOT_FOUND' && error instanceof Error && error.message.includes('/src/generated/')) {
    return { lines: ['The generated Prisma client is missing (src/generated/): run `npm run generate` (npm ci runs it too).'], exitCode: 1 };
  }
  return { lines: [error instanceof Error ? error.message : String(error)], exitCode: 1 };
}

function fail(error: unknown, invocation: Invocation | undefined): never {
  const { lines, exitCode } = failureLines(error, invocation);
  console.error(lines.join('\n'));
  process.exit(exitCode);
}

function readInvocation(): Invocation {
  try {
    return parseInvocation(process.argv.slice(2));
  } catch (error) {
    return fail(error, undefined);
  }
}

const invocation = readInvocation();
main(invocation).then(
  () => {
    // One-shot commands exit when done: the schema engine leaves a lock-timeout timer running for ~10 s.
    if (invocation.kind === 'help' || !invocation.command.keepsRunning) process.exit(); // keeps a command's exitCode
  },
  (error: unknown) => fail(error, invocation),
);
