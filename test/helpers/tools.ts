import { spawnSync, type SpawnSyncOptions } from 'node:child_process';

/**
 * Runs an outside tool the tests use as a peer and returns its stdout. A missing tool or a failed run throws a
 * sentence naming the tool and how to get it, never a TypeError on an absent stdout.
 */
export function runTool(command: string, args: string[], options: SpawnSyncOptions = {}): string {
  const run = spawnSync(command, args, { ...options, encoding: 'utf8' });
  if ((run.error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT') {
    throw new Error(`${command} is not installed: run npm test (it installs scripts/ci-apt-packages.txt) or apt-get install them`);
  }
  if (run.error) throw run.error;
  if (run.status !== 0) throw new Error(`${command} ${args.join(' ')} exited ${run.status ?? run.signal}: ${String(run.stderr).trim()}`);
  return String(run.stdout);
}
