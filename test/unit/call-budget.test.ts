import { describe, expect, it } from 'vitest';
import { CallBudget, DEFAULT_BUS_CALLS_PER_REQUEST } from '../../src/engine/call-budget.js';
import { MAX_BUS_HOPS } from '../../src/engine/bus-rules.js';

// The arithmetic of src/engine/call-budget.ts on trees of calls as the bus makes them: each callee a
// request with its lease as budget, its answer giving back what it did not use.

/** A request that makes `width` calls one after the other, each to a request that does the same, `depth` levels down; returns the calls made. */
function sequentialTree(budget: CallBudget, width: number, depth: number): { calls: number; refused: number } {
  let calls = 0;
  let refused = 0;
  for (let i = 0; i < width && depth > 0; i++) {
    let lease: number;
    try {
      lease = budget.take('/fan/x');
    } catch {
      refused++;
      continue;
    }
    calls++;
    const callee = new CallBudget(lease);
    const below = sequentialTree(callee, width, depth - 1);
    calls += below.calls;
    refused += below.refused;
    budget.settle(lease, callee.answer(false));
  }
  return { calls, refused };
}

describe('the budget of bus calls', () => {
  it('six calls to itself at every level, as deep as hops allow: at most the budget in all', () => {
    const { calls, refused } = sequentialTree(new CallBudget(DEFAULT_BUS_CALLS_PER_REQUEST), 6, MAX_BUS_HOPS);
    expect(calls).toBeLessThanOrEqual(DEFAULT_BUS_CALLS_PER_REQUEST);
    expect(calls).toBeGreaterThan(DEFAULT_BUS_CALLS_PER_REQUEST / 2);
    expect(refused).toBeGreaterThan(0);
  });

  it('a chain as deep as hops allow gets through', () => {
    expect(sequentialTree(new CallBudget(DEFAULT_BUS_CALLS_PER_REQUEST), 1, MAX_BUS_HOPS)).toEqual({
      calls: MAX_BUS_HOPS,
      refused: 0,
    });
  });

  it('16 calls at a time (a call’s runs running at once), 50 times: none refused, each costs one, the leases come back', () => {
    const budget = new CallBudget(DEFAULT_BUS_CALLS_PER_REQUEST);
    for (let round = 0; round < 50; round++) {
      const leases = Array.from({ length: 16 }, () => budget.take('/leaf/one'));
      for (const lease of leases) budget.settle(lease, new CallBudget(lease).answer(false));
    }
    expect(budget.left).toBe(DEFAULT_BUS_CALLS_PER_REQUEST - 50 * 16);
  });

  it('in flight at once, their leases held: about the square root of twice the budget (44 of 1 000), then refused', () => {
    const budget = new CallBudget(DEFAULT_BUS_CALLS_PER_REQUEST);
    const leases: number[] = [];
    expect(() => {
      for (;;) leases.push(budget.take('/slow/x'));
    }).toThrow(/--max-bus-calls/);
    expect(leases.length).toBeGreaterThanOrEqual(40);
    expect(leases.length + leases.reduce((sum, lease) => sum + lease, 0)).toBeLessThanOrEqual(
      DEFAULT_BUS_CALLS_PER_REQUEST,
    );
  });

  it('a failed call spends its lease; an AFTER_FLOW pass keeps 16 of what it gives back', () => {
    const budget = new CallBudget(100);
    const lease = budget.take('/slow/x');
    budget.settle(lease, 0);
    expect(budget.left).toBe(99 - lease);
    const callee = new CallBudget(50);
    expect(callee.answer(true)).toBe(34);
    expect(callee.left).toBe(16);
  });
});
