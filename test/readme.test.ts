import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CONFIG_VARIABLES, loadConfig } from '../src/config.js';
import { allRpcRoutes } from '../src/api/legacy/routes.js';
import { allHttpRoutes } from '../src/api/legacy/http-routes.js';

// The README and the reference in docs/ must stay true: every configuration variable and every legacy path is
// documented, every link leads somewhere. The tutorial itself is run by test/tutorial.test.ts.

const read = (path: string) => readFileSync(new URL(`../${path}`, import.meta.url), 'utf8');
const readme = read('README.md');
const configuration = read('docs/configuration.md');
const api = read('docs/api.md');
const config = loadConfig({});

describe('README and docs/', () => {
  it('docs/configuration.md documents every environment variable of src/config.ts', () => {
    const missing = CONFIG_VARIABLES.filter((key) => !configuration.includes(`\`${key}\``));
    expect(missing).toEqual([]);
  });

  it('docs/api.md lists every legacy path of the route tables', () => {
    const paths = [...allRpcRoutes(config), ...allHttpRoutes(config)].map((r) => r.path);
    expect(paths.filter((p) => !api.includes(`\`${p}\``) && !api.includes(`${p}\``) && !api.includes(` ${p}`))).toEqual([]);
  });

  it('every relative link of the README and docs/ names an existing file', () => {
    for (const [file, text] of [['README.md', readme], ['docs/api.md', api], ['docs/configuration.md', configuration]] as const) {
      const base = new URL(`../${file}`, import.meta.url);
      const targets = [...text.matchAll(/\]\(([^)#\s]+)(#[^)]*)?\)/g)].map((m) => m[1]!).filter((t) => !/^[a-z]+:/.test(t));
      expect(targets.filter((t) => !existsSync(new URL(t, base))), file).toEqual([]);
    }
    expect(readme).toContain('](docs/configuration.md)');
  });

  it('names the test command that .ci/run calls, on its first screen', () => {
    expect(readme.split('\n').slice(0, 12).join('\n')).toContain('npm ci && npm test');
    expect(read('.ci/run')).toMatch(/^npm test$/m);
  });
});
