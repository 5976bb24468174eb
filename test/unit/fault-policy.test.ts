import { describe, expect, it } from 'vitest';
import { FaultPolicy } from '../../src/router/fault-policy.js';

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
