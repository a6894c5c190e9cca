import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CONFIG_VARIABLES, loadConfig } from '../src/config.js';
import { allRpcRoutes } from '../src/rest/routes.js';
import { allHttpRoutes } from '../src/rest/http-routes.js';

// The README must stay true: every configuration variable and every legacy path is documented there.

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
const config = loadConfig({});

describe('README', () => {
  it('documents every environment variable of src/config.ts', () => {
    const missing = CONFIG_VARIABLES.filter((key) => !readme.includes(`\`${key}\``));
    expect(missing).toEqual([]);
  });

  it('lists every legacy path of the route tables', () => {
    const paths = [...allRpcRoutes(config), ...allHttpRoutes(config)].map((r) => r.path);
    expect(paths.filter((p) => !readme.includes(`\`${p}\``) && !readme.includes(`${p}\``) && !readme.includes(` ${p}`))).toEqual([]);
  });

  it('names the test command that .ci/run calls', () => {
    expect(readme).toContain('npm ci && npm test');
    expect(readFileSync(new URL('../.ci/run', import.meta.url), 'utf8')).toMatch(/^npm test$/m);
  });
});
