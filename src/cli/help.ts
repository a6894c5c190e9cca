import { COMMANDS, commandNamed, MAIN_HELP_HINT, npmForm, subcommandsOf } from './commands.js';
import { ENV_HELP, type CliCommand, type EnvName } from './command.js';

// The help texts, rendered from the command table (src/cli/commands.ts) and nothing else.

const HELP_OPTION = { label: '-h, --help', text: 'show this help' };

/** `--help` of one command, or of the whole command line when `command` is null. */
export function renderHelp(command: CliCommand | null): string {
  return (command ? commandHelp(command) : mainHelp()).join('\n') + '\n';
}

function commandHelp(command: CliCommand): string[] {
  const words = command.run ? usageWords(command) : ['<command>', '[options]'];
  const lines = [`Usage: ${npmForm(command, words)}`, `   or: npx tsx src/main.ts ${[...command.path, ...words].join(' ')}`, '', command.summary];
  if (command.details) lines.push('', command.details);
  const subs = subcommandsOf(command);
  if (subs.length) lines.push('', 'Commands:', ...columns(subs.map((c) => ({ label: npmForm(c), text: c.summary }))));
  if (command.args?.length) lines.push('', 'Arguments:', ...columns(command.args.map((a) => ({ label: `<${a.name}>`, text: a.description }))));
  const options = (command.options ?? []).map((o) => ({ label: `--${o.name} <${o.value}>`, text: o.required ? `${o.description} (required)` : o.description }));
  lines.push('', 'Options:', ...columns([...options, HELP_OPTION]));
  if (command.env?.length) lines.push('', 'Environment:', ...envColumns(command.env));
  lines.push('');
  if (subs.length) lines.push(`Each command has its own help: ${npmForm(subs[0]!, ['--help'])}`);
  lines.push(`All commands: ${MAIN_HELP_HINT}`);
  return lines;
}

function mainHelp(): string[] {
  return [
    'Public-services gateway: one GraphQL API at /graphql, with the legacy REST and JSON-RPC paths beside it.',
    '',
    'Usage: npm start | npm run <command> -- [options]',
    '   or: npx tsx src/main.ts [command] [options]    (no command: serve)',
    '',
    'Commands:',
    ...columns(COMMANDS.map((c) => ({ label: npmForm(c), text: c.summary }))),
    '',
    'Options:',
    ...columns([{ label: HELP_OPTION.label, text: `${HELP_OPTION.text}; after a command, that command's: ${npmForm(COMMANDS[0]!, ['--help'])}, ${npmForm(commandNamed('keys create'), ['--help'])}` }]),
    '',
    'Environment (docs/configuration.md describes every variable):',
    ...envColumns(Object.keys(ENV_HELP) as EnvName[]),
  ];
}

/** Options, arguments and words after the command in a usage line: required ones bare, optional ones in brackets. */
function usageWords(command: CliCommand): string[] {
  return [
    ...(command.options ?? []).map((o) => (o.required ? `--${o.name} <${o.value}>` : `[--${o.name} <${o.value}>]`)),
    ...(command.args ?? []).map((a) => `<${a.name}>`),
  ];
}

function envColumns(names: readonly EnvName[]): string[] {
  return columns(names.map((name) => ({ label: name, text: ENV_HELP[name] })));
}

function columns(rows: readonly { label: string; text: string }[]): string[] {
  const width = Math.max(...rows.map((r) => r.label.length)) + 3;
  return rows.map((r) => `  ${r.label.padEnd(width)}${r.text}`);
}
