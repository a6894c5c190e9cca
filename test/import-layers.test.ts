import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

// The plan of docs/architecture.md, drawn from the imports themselves: every import of src/ runs to its own layer or
// one below it, and no two folders import each other (through any chain). A new import that runs back up fails here
// with the file and the line that makes it.

const ROOT = join(import.meta.dirname, '..');
const SRC = join(ROOT, 'src');

/** Layers from the top; a room is a folder of src/ or a file at its top. */
const LAYERS: readonly (readonly string[])[] = [
  ['main.ts'],
  ['cli/'],
  ['app.ts', 'gateway/', 'telemetry/'],
  ['edge/'],
  ['api/'],
  ['pipeline/'],
  ['schema/'],
  ['access/', 'identity/', 'queues/', 'tasks/', 'scheduler/', 'notifications/', 'channels/', 'signatures/', 'events/', 'runtime/', 'services.ts'],
  ['db/'],
  ['kit/', 'http/', 'config.ts', 'errors.ts', 'log.ts', 'validation.ts', 'pagination.ts', 'types/'],
];

const rankOf = new Map(LAYERS.flatMap((rooms, rank) => rooms.map((room) => [room, rank] as const)));
const roomOf = (path: string) => (path.includes('/') ? `${path.split('/')[0]}/` : path);

interface Import {
  from: string;
  to: string;
  line: number;
}

function sources(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && /\.(ts|js)$/.test(e.name) && !relative(SRC, e.parentPath).startsWith('generated'))
    .map((e) => join(e.parentPath, e.name));
}

const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^'";]*?from\s+['"](\.[^'"]+)['"]|import\(\s*['"](\.[^'"]+)['"]\s*\)/g;

function importsOf(file: string): Import[] {
  const text = readFileSync(file, 'utf8');
  const from = relative(SRC, file);
  const found: Import[] = [];
  for (const match of text.matchAll(IMPORT)) {
    const target = normalize(join(dirname(from), match[1] ?? match[2]!)).replace(/\.js$/, '.ts');
    if (target.startsWith('..') || target.startsWith('generated/')) continue;
    found.push({ from, to: target, line: text.slice(0, match.index).split('\n').length + (match[0].startsWith('\n') ? 1 : 0) });
  }
  return found;
}

const imports = sources(SRC).flatMap(importsOf);
const betweenRooms = imports.filter((i) => roomOf(i.from) !== roomOf(i.to));

describe('the import plan (docs/architecture.md)', () => {
  it('reads every import it should: the edge, the pipeline and the areas are all there', () => {
    expect(betweenRooms.length).toBeGreaterThan(150);
    expect(betweenRooms.some((i) => i.from.startsWith('edge/') && i.to.startsWith('pipeline/'))).toBe(true);
  });

  it('every room of src/ has a layer', () => {
    const rooms = new Set(imports.flatMap((i) => [roomOf(i.from), roomOf(i.to)]));
    expect([...rooms].filter((room) => !rankOf.has(room))).toEqual([]);
  });

  it('no import runs back up a layer', () => {
    const upward = betweenRooms.filter((i) => rankOf.get(roomOf(i.from))! > rankOf.get(roomOf(i.to))!);
    expect(upward.map((i) => `src/${i.from}:${i.line} imports src/${i.to}`)).toEqual([]);
  });

  it('no two folders import each other, through any chain', () => {
    const next = new Map<string, Set<string>>();
    for (const i of betweenRooms) {
      const [a, b] = [roomOf(i.from), roomOf(i.to)];
      if (!next.has(a)) next.set(a, new Set());
      next.get(a)!.add(b);
    }
    const reaches = (start: string, goal: string) => {
      const seen = new Set<string>();
      const stack = [...(next.get(start) ?? [])];
      while (stack.length) {
        const room = stack.pop()!;
        if (room === goal) return true;
        if (seen.has(room)) continue;
        seen.add(room);
        stack.push(...(next.get(room) ?? []));
      }
      return false;
    };
    const loops = [...next.keys()].filter((room) => reaches(room, room));
    expect(loops).toEqual([]);
  });
});
