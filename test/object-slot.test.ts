import { describe, expect, it } from 'vitest';
import { objectSlot } from '../src/kit/object-slot.js';

describe('objectSlot', () => {
  it('keeps a value per object, each slot its own', () => {
    const a = objectSlot<object, number>('a');
    const b = objectSlot<object, string>('b');
    const one = {};
    const two = {};
    a.set(one, 1);
    b.set(one, 'x');
    a.set(two, 2);
    expect([a.get(one), b.get(one), a.get(two), b.get(two)]).toEqual([1, 'x', 2, undefined]);
    a.set(one, 3);
    expect(a.get(one)).toBe(3);
  });

  it('is not seen by spreads, Object.assign, Object.keys, JSON or structuredClone', () => {
    const slot = objectSlot<Record<string, unknown>, string>('hidden');
    const row = { name: 'q', rate: 3 };
    slot.set(row, 'state');
    expect(Object.keys(row)).toEqual(['name', 'rate']);
    expect(Object.getOwnPropertySymbols({ ...row })).toEqual([]);
    expect(Object.getOwnPropertySymbols(Object.assign({}, row))).toEqual([]);
    expect(JSON.stringify(row)).toBe('{"name":"q","rate":3}');
    expect(structuredClone(row)).toEqual({ name: 'q', rate: 3 });
    expect(slot.get({ ...row })).toBeUndefined();
  });

  it('holds state for objects that cannot take a property', () => {
    const slot = objectSlot<object, number>('closed');
    const frozen = Object.freeze({});
    const sealed = Object.seal({ a: 1 });
    slot.set(frozen, 1);
    slot.set(sealed, 2);
    slot.set(frozen, 3);
    expect([slot.get(frozen), slot.get(sealed)]).toEqual([3, 2]);
    expect(Object.getOwnPropertySymbols(sealed)).toEqual([]);
  });

  it('works on fetch Requests, as the edges keep per-request state', () => {
    const slot = objectSlot<Request, { id: string }>('request id');
    const request = new Request('http://localhost/graphql', { method: 'POST', headers: { 'content-type': 'application/json' } });
    slot.set(request, { id: 'r1' });
    expect(slot.get(request)).toEqual({ id: 'r1' });
    expect(slot.get(new Request(request.url))).toBeUndefined();
  });
});
