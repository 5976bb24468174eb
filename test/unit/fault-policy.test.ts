import { describe, expect, it } from 'vitest';
import { FaultPolicy } from '../../src/front/scheduling/fault-policy.js';

const A = { host: 'localhost', env: 'dev', key: 'a' };
const B = { host: 'localhost', env: 'dev', key: 'b' };

describe('FaultPolicy.judge', () => {
  it('blames only the APIs whose directives were running, whoever else lost work', () => {
    const faults = new FaultPolicy();
    faults.noteLostWork(A, 0, 1_000);
    faults.noteLostWork(B, 0, 1_000);
    expect(faults.judge(0, 1_010, [A])).toEqual([{ api: A, verdict: { action: 'quarantine' } }]);
    // B's suspicion was used up by that death: a later death of the cell does not recall it.
    expect(faults.judge(0, 1_020, [])).toEqual([]);
  });

  it('without a running API, blames the API the router killed the cell for', () => {
    const faults = new FaultPolicy();
    faults.noteLostWork(A, 1, 1_000);
    faults.noteLostWork(B, 1, 1_000, true);
    expect(faults.judge(1, 1_010, []).map((v) => v.api)).toEqual([B]);
  });

  it('with nothing known, suspects every API that lost work in that cell recently', () => {
    const faults = new FaultPolicy();
    faults.noteLostWork(A, 0, 1_000);
    faults.noteLostWork(B, 1, 1_000);
    faults.noteLostWork({ host: 'localhost', env: 'dev', key: 'old' }, 0, 0);
    expect(faults.judge(0, 6_000, []).map((v) => v.api)).toEqual([A]);
  });

  it('pauses an API that kills its own quarantine cell, with a doubling pause', () => {
    const faults = new FaultPolicy();
    faults.place(A, 2, 0);
    expect(faults.judge(2, 10_000, [A])).toEqual([{ api: A, verdict: { action: 'pause', forMs: 1_000 } }]);
    expect(faults.admit(A, 10_500)).toBe(500);
    expect(faults.admit(A, 11_000)).toBe(0);
    expect(faults.judge(2, 20_000, [A])[0]!.verdict).toEqual({ action: 'pause', forMs: 2_000 });
  });

  it('an API placed without a cell (reaped) is quarantined again, not paused, when it kills another cell', () => {
    const faults = new FaultPolicy();
    faults.place(A, 2, 0);
    faults.place(A, null, 0);
    expect(faults.judge(0, 1_000, [A])[0]!.verdict).toEqual({ action: 'quarantine' });
    expect(faults.placement(A)).toMatchObject({ cell: null, strikes: 0 });
  });
});

describe('FaultPolicy with other instances', () => {
  it('tells its own decisions: a quarantine with the strikes so far, then each pause with its length', () => {
    const faults = new FaultPolicy();
    const told: unknown[] = [];
    faults.decided = (api, decision) => told.push({ api: api.key, ...decision });
    faults.noteLostWork(A, 0, 1_000);
    expect(faults.judge(0, 1_010, [])[0]!.verdict).toEqual({ action: 'quarantine' });
    faults.place(A, 3, 1_010);
    faults.judge(3, 2_000, [A]);
    expect(told).toEqual([
      { api: 'a', strikes: 0, pausedForMs: 0 },
      { api: 'a', strikes: 1, pausedForMs: 1_000 },
    ]);
  });

  it('adopts another instance’s quarantine (no cell until a request needs one) and pause (what is left of it), without telling them back', () => {
    const faults = new FaultPolicy();
    const told: unknown[] = [];
    faults.decided = (api, decision) => told.push({ api: api.key, ...decision });
    expect(faults.adopt(A, { strikes: 0, pausedForMs: 0 }, 1_000)).toBe('quarantined');
    expect(faults.placement(A)).toMatchObject({ cell: null, strikes: 0, pausedUntil: 0 });
    expect(faults.adopt(A, { strikes: 0, pausedForMs: 0 }, 1_100)).toBeNull();
    expect(faults.adopt(A, { strikes: 2, pausedForMs: 1_500 }, 2_000)).toBe('paused');
    expect(faults.admit(A, 2_500)).toBe(1_000);
    // The same notice again (the poll after the channel): nothing new.
    expect(faults.adopt(A, { strikes: 2, pausedForMs: 1_000 }, 2_500)).toBeNull();
    expect(faults.admit(A, 3_500)).toBe(0);
    // Its strikes count here too: its next crash of its quarantine cell here pauses it for 4 s.
    faults.place(A, 4, 4_000);
    expect(faults.judge(4, 5_000, [A])[0]!.verdict).toEqual({ action: 'pause', forMs: 4_000 });
    // Only that decision, its own, was told.
    expect(told).toEqual([{ api: 'a', strikes: 3, pausedForMs: 4_000 }]);
  });

  it('never shortens a pause of its own, nor lowers its strikes', () => {
    const faults = new FaultPolicy();
    faults.place(A, 2, 0);
    faults.judge(2, 10_000, [A]);
    faults.judge(2, 12_000, [A]);
    expect(faults.placement(A)).toMatchObject({ strikes: 2, pausedUntil: 14_000 });
    expect(faults.adopt(A, { strikes: 1, pausedForMs: 500 }, 12_500)).toBeNull();
    expect(faults.placement(A)).toMatchObject({ strikes: 2, pausedUntil: 14_000 });
  });
});
