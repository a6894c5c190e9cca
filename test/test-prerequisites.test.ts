import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

// `npm test` on a fresh box: the pretest script installs the Debian peers or stops with the exact command to run.

const script = new URL('../scripts/test-prerequisites.mjs', import.meta.url).pathname;
const run = (env: Record<string, string>) =>
  spawnSync(process.execPath, [script], { env: { ...process.env, ...env }, encoding: 'utf8', timeout: 30_000 });

describe('test prerequisites (pretest)', () => {
  it('passes on this machine: every listed package is installed and PostgreSQL lets the user create databases', () => {
    const r = run({});
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
  });

  it('a missing package stops the run at once with the exact apt-get line, no stack trace', () => {
    const r = run({ TEST_APT_PACKAGES: 'gostsum no-such-package-xyz', TEST_APT_INSTALL: 'never' });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('missing Debian packages: no-such-package-xyz');
    expect(r.stderr).toContain('sudo apt-get install -y --no-install-recommends gostsum no-such-package-xyz');
    expect(r.stderr).not.toMatch(/^\s+at /m);
  });

  it('an unreachable PostgreSQL is one sentence naming TEST_POSTGRES_URL', () => {
    const r = run({ TEST_APT_PACKAGES: '', TEST_POSTGRES_URL: 'postgresql://postgres:secret@127.0.0.1:1/test' });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('TEST_POSTGRES_URL=postgresql://postgres:***@127.0.0.1:1/test: PostgreSQL does not answer (ECONNREFUSED)');
    expect(r.stderr).not.toContain('secret');
    expect(r.stderr).not.toMatch(/^\s+at /m);
  });
});
