import { describe, expect, it } from 'vitest';
import { isoInstant } from '../src/schema/iso-instant.js';

describe('isoInstant', () => {
  it('writes what Date#toISOString writes, edge years and fields included', () => {
    const edges = [
      Date.UTC(1000, 0, 1), Date.UTC(999, 11, 31, 23, 59, 59, 999), Date.UTC(9999, 11, 31, 23, 59, 59, 999), Date.UTC(10000, 0, 1),
      Date.UTC(1, 0, 1), Date.UTC(-1, 0, 1), 0, -1, Date.UTC(2024, 1, 29, 9, 5, 7, 3), Date.UTC(2026, 10, 23, 12, 0, 0, 40),
      8.64e15, -8.64e15,
    ];
    for (const ms of edges) expect(isoInstant(new Date(ms))).toBe(new Date(ms).toISOString());
    // Instants spread over years 1000-9999 (the path that builds the string), then over the whole Date range.
    let seed = 7;
    const next = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
    const [from, to] = [Date.UTC(1000, 0, 1), Date.UTC(10000, 0, 1)];
    for (let i = 0; i < 20_000; i++) {
      const ms = from + Math.floor(next() * (to - from));
      expect(isoInstant(new Date(ms))).toBe(new Date(ms).toISOString());
    }
    for (let i = 0; i < 2_000; i++) {
      const ms = Math.floor(next() * 2 * 8.64e15) - 8.64e15;
      expect(isoInstant(new Date(ms))).toBe(new Date(ms).toISOString());
    }
  });

  it('throws for an invalid date, as toISOString does', () => {
    expect(() => isoInstant(new Date(Number.NaN))).toThrow(RangeError);
  });
});
