// Runs every code generator the build needs, offline. Called by prestart/pretest so a fresh clone needs no extra step.
import { spawnSync } from 'node:child_process';

// `prisma generate` needs no schema engine, but the CLI tries to download one unless this names an existing file.
const env = { ...process.env, PRISMA_SCHEMA_ENGINE_BINARY: process.execPath, PRISMA_HIDE_UPDATE_MESSAGE: '1', CHECKPOINT_DISABLE: '1' };
for (const [cmd, args] of [
  ['prisma', ['generate']],
  ['graphql-codegen', ['--config', 'codegen.ts', '--silent']],
]) {
  const r = spawnSync(cmd, args, { stdio: ['ignore', 'inherit', 'inherit'], env });
  if (r.status !== 0) {
    console.error(`generate: ${cmd} ${args.join(' ')} failed (exit ${r.status})`);
    process.exit(r.status ?? 1);
  }
}
