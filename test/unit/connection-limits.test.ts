import { describe, expect, it } from 'vitest';
import { connectionLimits, readOpenFilesLimit } from '../../src/front/edge/connection-limits.js';

describe('connectionLimits', () => {
  it('leaves a quarter of the open-files limit (at least 256) to the router, and one client a quarter of the rest', () => {
    expect(connectionLimits(undefined, undefined, 20_000)).toEqual({ total: 15_000, perClient: 256 });
    expect(connectionLimits(undefined, undefined, 1024)).toEqual({ total: 768, perClient: 192 });
    expect(connectionLimits(undefined, undefined, 600)).toEqual({ total: 344, perClient: 86 });
    expect(connectionLimits(undefined, undefined, 1_048_576)).toEqual({ total: 50_000, perClient: 256 });
    // No limit known: as for 1024, the usual soft limit.
    expect(connectionLimits(undefined, undefined, null)).toEqual({ total: 768, perClient: 192 });
  });

  it('takes the flags as given, the per-client default from the total chosen', () => {
    expect(connectionLimits(40, undefined, 20_000)).toEqual({ total: 40, perClient: 10 });
    expect(connectionLimits(40, 100, 20_000)).toEqual({ total: 40, perClient: 100 });
    expect(connectionLimits(undefined, 3, 20_000)).toEqual({ total: 15_000, perClient: 3 });
  });

  it("reads this process's limit where /proc tells it", () => {
    const limit = readOpenFilesLimit();
    if (process.platform === 'linux') expect(limit).toBeGreaterThan(0);
    else expect(limit).toBeNull();
  });
});
