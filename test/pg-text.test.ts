import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTextArray, parseUtcTimestamp, TEXT_ARRAY } from '../src/db/pg-text.js';
import { ADMIN_URL } from './helpers/databases.js';

// The fast paths read what the general parsers read: V8's Date string parser for timestamps (as the gateway read them
// before), postgres-array for text arrays. Then PostgreSQL's own text output of edge values, read both ways.

const generalTimestamp = (text: string) => new Date(`${text.replace(' ', 'T')}Z`);
const generalTextArray = pg.types.getTypeParser(TEXT_ARRAY, 'text') as (text: string) => unknown;
const sameTime = (a: Date, b: Date) => (Number.isNaN(a.getTime()) ? Number.isNaN(b.getTime()) : a.getTime() === b.getTime());

describe('parseUtcTimestamp', () => {
  it('reads every instant of years 100-9999 as the general parser does, whatever the fraction digits', () => {
    let seed = 11;
    const next = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
    const [from, to] = [Date.UTC(100, 0, 1), Date.UTC(10000, 0, 1)];
    for (let i = 0; i < 20_000; i++) {
      const iso = new Date(from + Math.floor(next() * (to - from))).toISOString();
      // PostgreSQL drops trailing zeros of the fraction, and the dot with them; microseconds come as six digits.
      const text = [iso.slice(0, 19), `${iso.slice(0, 23)}`.replace(/\.?0+$/, ''), `${iso.slice(0, 23)}${String(i % 1000).padStart(3, '0')}`][i % 3]!.replace('T', ' ');
      const read = parseUtcTimestamp(text);
      expect(read.getTime(), text).toBe(generalTimestamp(text).getTime());
    }
  });

  it('hands what is not that shape, or out of range, to the general parser', () => {
    const edges = [
      '0050-01-01 00:00:00', '0099-12-31 23:59:59.999', '0100-01-01 00:00:00', '0001-01-01 00:00:00 BC', 'infinity', '-infinity',
      '10000-01-01 00:00:00', '2026-02-31 00:00:00', '2026-04-31 12:00:00', '2026-13-01 00:00:00', '2026-00-10 00:00:00',
      '2026-01-00 00:00:00', '2026-01-01 24:00:00', '2026-01-01 23:60:00', '2026-01-01 23:59:60', '2026-01-01 00:00:00.',
      '2026-01-01 00:00:00.1234567', '2026-01-01 00:00:00.12a', '2026-0a-01 00:00:00', '2026-01-01T00:00:00', '2026-01-01 00:00',
      '', 'x',
    ];
    for (const text of edges) expect(sameTime(parseUtcTimestamp(text), generalTimestamp(text)), text).toBe(true);
    expect(parseUtcTimestamp('2026-02-31 00:00:00').toISOString()).toBe('2026-03-03T00:00:00.000Z');
    expect(parseUtcTimestamp('0050-01-01 00:00:00').toISOString()).toBe('0050-01-01T00:00:00.000Z');
  });
});

describe('parseTextArray', () => {
  it('reads what postgres-array reads', () => {
    const arrays = [
      '{}', '{a}', '{bench,group-1}', '{NULL}', '{NULL,a,NULL}', '{null,Null}', '{"NULL",b}', '{"",x}', '{"a b","c,d"}',
      '{"quote \\" in","back\\\\slash"}', '{{a,b},{c,d}}', '{{}}', '[0:1]={a,b}', '{a,{b}}', '{ü,日本,😀}', '{"{"}',
    ];
    for (const text of arrays) expect(parseTextArray(text), text).toEqual(generalTextArray(text));
  });

  it('answers what is not an array as postgres-array does', () => {
    const outcome = (parse: (text: string) => unknown, text: string) => {
      try {
        return { value: parse(text) };
      } catch {
        return { thrown: true };
      }
    };
    for (const text of ['{a', 'a}', 'abc', '{a}}', '']) expect(outcome(parseTextArray, text), text).toEqual(outcome(generalTextArray, text));
    expect(() => parseTextArray('{a')).toThrow();
  });
});

describe('PostgreSQL text output', () => {
  let client: pg.Client;
  beforeAll(async () => {
    client = new pg.Client({ connectionString: ADMIN_URL, types: { getTypeParser: () => (text: string) => text } });
    await client.connect();
  });
  afterAll(() => client?.end());

  it('reads PostgreSQL\'s timestamps and text arrays as the general parsers do', async () => {
    const { rows } = await client.query<{ t: string; a: string }>(`
      SELECT t::text AS t, a::text AS a FROM (VALUES
        ('2026-11-26 16:42:44.113'::timestamp(3), ARRAY['bench', 'group-1']),
        ('2026-01-01 00:00:00'::timestamp, ARRAY['', 'NULL', NULL, 'a b', 'c,d', 'q"q', 'b\\s', '{x}']),
        ('2026-01-01 00:00:00.5'::timestamp, ARRAY[]::text[]),
        ('2026-01-01 00:00:00.123456'::timestamp, ARRAY['ü', '日本']),
        ('0050-06-15 12:00:00'::timestamp, ARRAY['x']),
        ('0001-01-01 00:00:00 BC'::timestamp, ARRAY['y']),
        ('infinity'::timestamp, ARRAY['z']),
        ('10000-01-01 00:00:00'::timestamp, ARRAY['w'])
      ) AS v(t, a)`);
    for (const { t, a } of rows) {
      expect(sameTime(parseUtcTimestamp(t), generalTimestamp(t)), t).toBe(true);
      expect(parseTextArray(a), a).toEqual(generalTextArray(a));
    }
    expect(parseTextArray(rows[1]!.a)).toEqual(['', 'NULL', null, 'a b', 'c,d', 'q"q', 'b\\s', '{x}']);
  });
});
