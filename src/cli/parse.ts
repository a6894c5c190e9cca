import { parseArgs } from 'node:util';
import { COMMANDS, DEFAULT_COMMAND, subcommandsOf } from './commands.js';
import type { CliCommand, CommandInput } from './command.js';
import { UsageError } from './usage-error.js';

export type RunnableCommand = CliCommand & Required<Pick<CliCommand, 'run'>>;

export type Invocation = { kind: 'help'; command: CliCommand | null } | { kind: 'run'; command: RunnableCommand; input: CommandInput };

const HELP_FLAGS = new Set(['--help', '-h']);

/**
 * Reads the arguments of `src/main.ts` against the command table. `--help` or `-h` anywhere before `--` wins over
 * everything else, so asking for help never runs anything; whatever the table does not accept throws a UsageError.
 */
export function parseInvocation(argv: readonly string[], commands: readonly CliCommand[] = COMMANDS): Invocation {
  const end = argv.indexOf('--');
  const wantsHelp = (end === -1 ? argv : argv.slice(0, end)).some((a) => HELP_FLAGS.has(a));
  const command = longestMatch(argv, commands);
  if (!command) {
    const [first] = argv;
    if (first === undefined) return { kind: 'run', command: runnable(DEFAULT_COMMAND), input: { values: {}, positionals: [] } };
    if (wantsHelp && first.startsWith('-')) return { kind: 'help', command: null };
    const names = commands.filter((c) => c.path.length === 1).map((c) => c.path[0]);
    throw new UsageError(first.startsWith('-') ? `Unknown option "${first}".` : `Unknown command "${first}"; the commands are ${names.join(', ')}.`, { command: null });
  }
  if (wantsHelp) return { kind: 'help', command };
  const rest = argv.slice(command.path.length);
  const name = command.path.join(' ');
  if (!command.run) {
    const subs = subcommandsOf(command).map((c) => c.path.at(-1));
    const [first] = rest;
    if (first === undefined) throw new UsageError(`"${name}" needs a command: ${subs.join(', ')}.`, { command });
    throw new UsageError(first.startsWith('-') ? `Unknown option "${first}" for ${name}.` : `Unknown command "${name} ${first}"; the ${name} commands are ${subs.join(', ')}.`, { command });
  }
  return { kind: 'run', command: runnable(command), input: readInput(command, rest) };
}

function longestMatch(argv: readonly string[], commands: readonly CliCommand[]): CliCommand | undefined {
  let best: CliCommand | undefined;
  for (const c of commands) {
    if (c.path.every((word, i) => argv[i] === word) && c.path.length > (best?.path.length ?? 0)) best = c;
  }
  return best;
}

function runnable(command: CliCommand): RunnableCommand {
  if (!command.run) throw new Error(`the command table's "${command.path.join(' ')}" has no run()`);
  return command as RunnableCommand;
}

/** Options and arguments exactly as the table declares them: every option takes a value, every argument is required. */
function readInput(command: CliCommand, args: readonly string[]): CommandInput {
  const name = command.path.join(' ');
  const declared = command.options ?? [];
  const { tokens } = parseArgs({
    args: [...args],
    options: Object.fromEntries(declared.map((o) => [o.name, { type: 'string' as const }])),
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  const values: Record<string, string> = {};
  const positionals: string[] = [];
  for (const token of tokens) {
    if (token.kind === 'positional') positionals.push(token.value);
    if (token.kind !== 'option') continue;
    const option = declared.find((o) => o.name === token.name);
    if (!option) throw new UsageError(`Unknown option "${token.rawName}" for ${name}.`, { command });
    // `--name --scopes x` would take "--scopes" as the name; a value that starts with a dash is written `--name=-x`.
    if (token.value === undefined || (!token.inlineValue && token.value.startsWith('-'))) {
      throw new UsageError(`Option --${option.name} needs a value: --${option.name} <${option.value}>.`, { command });
    }
    if (option.name in values) throw new UsageError(`Option --${option.name} is given twice.`, { command });
    values[option.name] = token.value;
  }
  const missing = declared.find((o) => o.required && values[o.name] === undefined);
  if (missing) throw new UsageError(`Missing --${missing.name} <${missing.value}>.`, { command });
  const expected = command.args ?? [];
  if (positionals.length < expected.length) throw new UsageError(`Missing <${expected[positionals.length]!.name}>.`, { command });
  if (positionals.length > expected.length) throw new UsageError(`Unexpected argument "${positionals[expected.length]}" for ${name}.`, { command });
  return { values, positionals };
}
