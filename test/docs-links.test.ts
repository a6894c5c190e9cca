import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

// The manual stays a manual (issue 45): every relative link of the README and docs/*.md leads to a file that exists,
// so does every docs/… page a text names, the pages stay within the length a reader goes through, and the branch
// notes stay folded into the pages they belong to.

const root = new URL('../', import.meta.url);
const read = (path: string) => readFileSync(new URL(path, root), 'utf8');
const pages = ['README.md', ...readdirSync(new URL('docs/', root)).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
const lines = (path: string) => read(path).replace(/\n$/, '').split('\n').length;

/** Markdown links `](target)` and `](target#anchor)` that are not URLs or anchors of the same page. */
function relativeLinks(text: string): string[] {
  return [...text.matchAll(/\]\(([^)#\s]+)(?:#[^)\s]*)?\)/g)].map((m) => m[1]!).filter((t) => !/^[a-z][a-z0-9+.-]*:/i.test(t));
}

describe('README.md and docs/', () => {
  it.each(pages)('%s: every relative link names an existing file', (page) => {
    const base = new URL(page, root);
    expect(relativeLinks(read(page)).filter((target) => !existsSync(new URL(target, base)))).toEqual([]);
  });

  it.each(pages)('%s: every docs/… page it names exists', (page) => {
    const named = [...read(page).matchAll(/(?<![\w/.-])docs\/[\w./-]+\.md\b/g)].map((m) => m[0]);
    expect(named.filter((path) => !existsSync(new URL(path, root)))).toEqual([]);
  });

  it.each([
    ['README.md', 220],
    ['docs/performance.md', 450],
    ['docs/decisions.md', 450],
  ] as const)('%s has at most %i lines', (page, most) => {
    expect(lines(page)).toBeLessThanOrEqual(most);
  });

  it('has no docs/notes: branch notes are folded into the pages they belong to', () => {
    expect(existsSync(new URL('docs/notes', root))).toBe(false);
  });
});
