import type { CliCommand } from './command.js';

/**
 * A command line the table does not accept, or a value a command refuses before it changes anything. src/main.ts
 * prints the message and where the command's help is, without a stack: the fix is on the caller's side.
 */
export class UsageError extends Error {
  readonly exitCode: number;
  /** The command whose help to point at; null: the main help; undefined: the command that was running. */
  readonly command: CliCommand | null | undefined;

  constructor(message: string, options: { exitCode?: number; command?: CliCommand | null } = {}) {
    super(message);
    this.name = 'UsageError';
    this.exitCode = options.exitCode ?? 2;
    this.command = options.command;
  }
}
