import { describe, expect, it } from 'vitest';
import { HostMemoryBudget, hostBytes, RESPONSE_BODY } from '../../src/engine/host-memory.js';
import { Memory } from '../../src/engine/memory.js';

describe('hostBytes', () => {
  it('counts strings by length and objects by their keys and values', () => {
    expect(hostBytes('x'.repeat(1000), Infinity)).toBe(1000);
    expect(hostBytes({ a: 'x'.repeat(1000) }, Infinity)).toBeGreaterThan(1000);
  });

  it("counts a frozen value (the release's Maps, static parameters) as a reference", () => {
    const shared = Object.freeze({ big: 'x'.repeat(100_000) });
    expect(hostBytes(shared, Infinity)).toBe(8);
    expect(hostBytes([shared, shared], Infinity)).toBeLessThan(100);
  });

  it('counts every kind a copy out of an isolate carries by what it holds', () => {
    const big = 'x'.repeat(100_000);
    const kinds: Record<string, unknown> = {
      Map: new Map([[1, big]]),
      'Map key': new Map([[big, 1]]),
      Set: new Set([big]),
      Error: new Error(big),
      RegExp: new RegExp(big),
      String: new String(big),
      ArrayBuffer: new ArrayBuffer(100_000),
      Uint8Array: new Uint8Array(100_000),
      Float64Array: new Float64Array(12_500),
      DataView: new DataView(new ArrayBuffer(100_000)),
      'a view of a big buffer': new Uint8Array(new ArrayBuffer(100_000), 0, 1),
      nested: { a: [new Map([['k', new Set([big])]])] },
    };
    for (const [kind, value] of Object.entries(kinds))
      expect(hostBytes(value, Infinity), kind).toBeGreaterThanOrEqual(100_000);
  });

  it('counts a buffer once for all its views', () => {
    const buffer = new ArrayBuffer(100_000);
    expect(hostBytes([new Uint8Array(buffer), new DataView(buffer)], Infinity)).toBeLessThan(101_000);
  });

  it('measures a sparse array by its length without visiting its holes', () => {
    const sparse: number[] = [];
    sparse[1e9] = 1;
    expect(hostBytes(sparse, 1_000_000)).toBeGreaterThan(8e9);
  });

  it('stops walking once past the cap', () => {
    const wide = Array.from({ length: 100_000 }, () => ({ v: 'x'.repeat(100) }));
    expect(hostBytes(wide, 10_000)).toBeGreaterThan(10_000);
  });
});

describe('HostMemoryBudget with Memory', () => {
  it("replaces a place's count when it is stored again, and lets go of everything on a breach", () => {
    const budget = new HostMemoryBudget(10_000);
    const memory = new Memory({}, budget);
    for (let i = 0; i < 20; i++) memory.set('same', 'x'.repeat(5_000));
    memory.set('other', 'y'.repeat(4_000));
    expect(() => memory.set('third', 'z'.repeat(2_000))).toThrow(
      /memory limit: storing third would make this request hold more than/,
    );
    expect(memory.get('same')).toBeNull();
    expect(memory.get('other')).toBeNull();
    memory.set('error', { status: 500, message: 'room again' });
    expect(memory.get('error')).toEqual({ status: 500, message: 'room again' });
  });

  it('counts a memory key named like the body apart from the body', () => {
    const budget = new HostMemoryBudget(10_000);
    const memory = new Memory({}, budget);
    memory.set(RESPONSE_BODY, 'x'.repeat(6_000));
    expect(() => budget.chargeOther(RESPONSE_BODY, 'y'.repeat(6_000))).toThrow(
      /memory limit: storing the response body/,
    );
  });
});
