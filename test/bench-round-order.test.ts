import { describe, expect, it } from 'vitest';
import { roundOrders } from '../bench/lib.js';

// bench:graphql's goals are ratios of targets measured in interleaved rounds; they are only fair if no target always
// runs after the same neighbour (what a slice leaves behind falls on the next one).
describe('the order of an interleaved benchmark round', () => {
  const targets = Array.from({ length: 13 }, (_, i) => `target ${i}`);
  const rounds = roundOrders(targets, 16, 1);

  it('holds every target once, and is the same for the same seed', () => {
    expect(rounds).toHaveLength(16);
    for (const order of rounds) expect([...order].sort()).toEqual([...targets].sort());
    expect(roundOrders(targets, 16, 1)).toEqual(rounds);
    expect(roundOrders(targets, 16, 2)[3]).not.toEqual(rounds[3]);
  });

  it('puts each target after many different neighbours and in many places over a run', () => {
    for (const target of targets) {
      const before = new Set(rounds.map((order) => order[order.indexOf(target) - 1] ?? 'first'));
      const places = new Set(rounds.map((order) => order.indexOf(target)));
      // A fixed order turned by one each round gives exactly two predecessors; sixteen random rounds give far more.
      expect(before.size).toBeGreaterThanOrEqual(5);
      expect(places.size).toBeGreaterThanOrEqual(5);
    }
  });
});
