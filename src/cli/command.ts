import type { Config } from '../config.js';

// What a command of src/main.ts is (src/cli/commands.ts holds the table of them): its words, its help, its inputs.

/** What a command's help says about the variables it reads (docs/configuration.md describes all of them). */
export const ENV_HELP = {
  DATABASE_URL: 'postgresql:// URL of the database; unset: the embedded database in DATA_DIR',
  DATA_DIR: 'directory of the embedded database (default .data); one process at a time may open it',
  MIGRATE_ON_START: 'apply pending migrations before anything else (default on)',
  PORT: 'TCP port to listen on (default 4000; 0 picks a free one)',
  HOST: 'address to listen on (default 127.0.0.1)',
  AUTH: 'on: every request needs an API key (default on with DATABASE_URL, else off; off only on a loopback HOST)',
  LOG_LEVEL: 'fatal, error, warn, info, debug, trace or silent (default info)',
  GRAPHIQL: 'serve GraphiQL at /graphql to browsers (default on)',
  CONSOLE: 'serve the operator console at /console (default on)',
  IDENTITY_DEMO_DATA: 'load the identity demo data into an empty embedded database (default on)',
} as const satisfies Partial<Record<keyof Config, string>>;

export type EnvName = keyof typeof ENV_HELP;

export interface CommandOption {
  name: string;
  /** The value's placeholder in usage lines: `--name <value>`. */
  value: string;
  description: string;
  required?: boolean;
}

export interface CommandArgument {
  name: string;
  description: string;
}

export interface CommandInput {
  values: Readonly<Record<string, string | undefined>>;
  positionals: readonly string[];
}

export interface CliCommand {
  /** The words after `src/main.ts`: `['keys', 'create']`. */
  path: readonly string[];
  /** The npm script that runs `src/main.ts <path[0]>`. */
  script: string;
  summary: string;
  /** Further paragraphs of the help. */
  details?: string;
  options?: readonly CommandOption[];
  /** Positional arguments, all required. */
  args?: readonly CommandArgument[];
  env?: readonly EnvName[];
  /** The process stays up after run() resolved (the server); any other command exits when done. */
  keepsRunning?: boolean;
  /** Absent for a group (`keys`): one of its subcommands runs. */
  run?: (input: CommandInput) => Promise<void>;
}
