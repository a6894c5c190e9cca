import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { TASK_END_STATUSES, TASK_STATUSES, TASK_TRANSITIONS } from '../src/db/task-transitions.js';

// docs/decisions.md carries the task transition table for readers; the code enforces TASK_TRANSITIONS. They must agree.

const decisions = readFileSync(new URL('../docs/decisions.md', import.meta.url), 'utf8');

describe('task transition table', () => {
  it('docs/decisions.md lists exactly the transitions the code enforces', () => {
    const section = decisions.slice(decisions.indexOf('## Tasks'), decisions.indexOf('### Choices', decisions.indexOf('## Tasks')));
    const rows = section
      .split('\n')
      .filter((line) => /^\| [a-zA-Z]+ \|/.test(line) && !line.startsWith('| Action'))
      .map((line) => line.split('|').slice(1, -1).map((cell) => cell.trim()));
    const documented = Object.fromEntries(rows.map(([action, by, from, to]) => [action, { by, from: from === '(new)' ? [] : from!.split(', '), to: to === '(deleted)' ? [] : to!.split(', ') }]));
    const enforced = Object.fromEntries(Object.entries(TASK_TRANSITIONS).map(([action, t]) => [action, { by: t.by, from: [...t.from], to: [...t.to] }]));
    expect(documented).toEqual(enforced);
  });

  it('the end statuses that complete a status subscription are exactly those the gateway never leaves by itself', () => {
    const leftByTheGateway = new Set<string>(Object.values(TASK_TRANSITIONS).filter((t) => t.by.startsWith('dispatcher')).flatMap((t) => [...t.from]));
    const reached = new Set<string>(Object.values(TASK_TRANSITIONS).flatMap((t) => [...t.to]));
    expect([...TASK_END_STATUSES].sort()).toEqual(TASK_STATUSES.filter((s) => reached.has(s) && !leftByTheGateway.has(s)).sort());
  });
});
