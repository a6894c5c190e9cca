import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { GraphQLSchema } from 'graphql';
import { buildSchema } from '../src/schema/schema.js';
import { declaredScopes, scopeOf } from '../src/access/field-scopes.js';

// docs/security.md's "Scopes" table must list exactly the scopes the code defines (every scope a root field of the
// schema declares, plus admin:all and metrics:read: declaredScopes, what a key may be created with), and for each
// scope exactly the root fields that declare it.

const security = readFileSync(new URL('../docs/security.md', import.meta.url), 'utf8');

/** Scope -> the backticked identifiers of its row, from the table of the "### Scopes" section. */
function documentedScopes(markdown: string): Map<string, Set<string>> {
  const start = markdown.indexOf('\n### Scopes\n');
  if (start < 0) throw new Error('docs/security.md has no "### Scopes" section');
  const next = markdown.slice(start + 1).search(/\n#{2,3} /);
  const section = next < 0 ? markdown.slice(start) : markdown.slice(start, start + 1 + next);
  const rows = new Map<string, Set<string>>();
  for (const line of section.split('\n')) {
    const row = /^\| `([a-z]+:[a-z]+)` \|(.*)\|\s*$/.exec(line);
    if (!row) continue;
    const names = [...row[2]!.matchAll(/`([^`]+)`/g)].map((m) => m[1]!).filter((t) => /^[A-Za-z_]\w*$/.test(t));
    rows.set(row[1]!, new Set(names));
  }
  return rows;
}

/** Scope -> the root fields (query, mutation, subscription) declaring it. */
function fieldsByScope(schema: GraphQLSchema): Map<string, Set<string>> {
  const byScope = new Map<string, Set<string>>();
  for (const root of [schema.getQueryType(), schema.getMutationType(), schema.getSubscriptionType()]) {
    for (const field of Object.values(root?.getFields() ?? {})) {
      const scope = scopeOf(field);
      if (scope) byScope.set(scope, (byScope.get(scope) ?? new Set()).add(field.name));
    }
  }
  return byScope;
}

describe('docs/security.md, Scopes', () => {
  const schema = buildSchema();
  const documented = documentedScopes(security);

  it('lists every scope the code defines, and no other', () => {
    const defined = [...declaredScopes(schema)].sort();
    const listed = [...documented.keys()].sort();
    expect({ missingFromTheDoc: defined.filter((s) => !listed.includes(s)), notInTheCode: listed.filter((s) => !defined.includes(s)) }).toEqual({
      missingFromTheDoc: [],
      notInTheCode: [],
    });
  });

  it("names, for each scope, exactly the root fields that declare it", () => {
    const declared = fieldsByScope(schema);
    for (const [scope, names] of documented) {
      expect([...names].sort(), scope).toEqual([...(declared.get(scope) ?? [])].sort());
    }
  });
});
