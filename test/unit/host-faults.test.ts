import { describe, expect, it } from 'vitest';
import { FaultPolicy } from '../../src/front/scheduling/fault-policy.js';
import { HostFaults } from '../../src/front/scheduling/host-faults.js';

// Blame per tenant (public host), on a fake clock (plain milliseconds).
const A = 'a.example';
const api = (key: string, host = A) => ({ host, env: 'dev', key });
const HOST_A = { host: A, env: 'dev' };
const WINDOW = 10 * 60_000;

describe('HostFaults', () => {
  it('makes a host suspect at its first abort: its APIs that start from then on start in its quarantine cell, for good', () => {
    const hosts = new HostFaults({ aborts: 2, windowMs: WINDOW });
    expect(hosts.stage(HOST_A, 0)).toBeNull();
    expect(hosts.blame(api('k1'), 1_000)).toEqual({ action: 'suspect' });
    expect(hosts.stage(HOST_A, 1_000)).toBe('new-apis');
    // The same API again counts once (per-API quarantine and pause deal with it), but keeps the host suspect.
    expect(hosts.blame(api('k1'), 5_000)).toBeNull();
    expect(hosts.stage(HOST_A, 5_000 + WINDOW)).toBe('new-apis');
    expect(hosts.stage(HOST_A, 5_000 + 1_000 * WINDOW)).toBe('new-apis');
    // Another host is not touched.
    expect(hosts.stage({ host: 'b.example', env: 'dev' }, 5_000)).toBeNull();
    expect(hosts.admit({ host: 'b.example', env: 'dev' }, 5_000)).toBe(0);
  });

  it('moves a host once --host-abort-limit different APIs of it abort cells within the window, for good', () => {
    const hosts = new HostFaults({ aborts: 2, windowMs: WINDOW });
    hosts.blame(api('k1'), 0);
    expect(hosts.blame(api('k2'), 60_000)).toEqual({ action: 'move' });
    expect(hosts.stage(HOST_A, 60_000)).toBe('all-apis');
    expect(hosts.stage(HOST_A, 100 * WINDOW)).toBe('all-apis');
  });

  it('forgets aborts older than the window for the move: two aborts further apart do not move the host, which stays suspect', () => {
    const hosts = new HostFaults({ aborts: 2, windowMs: WINDOW });
    hosts.blame(api('k1'), 0);
    expect(hosts.blame(api('k2'), WINDOW)).toBeNull();
    expect(hosts.stage(HOST_A, WINDOW)).toBe('new-apis');
    expect(hosts.blame(api('k3'), WINDOW + 1)).toEqual({ action: 'move' });
  });

  it('a host aborting a cell once every window + 1 s keeps every fresh key of it out of the shared cells (review of issue 41, finding 3)', () => {
    const hosts = new HostFaults({ aborts: 2, windowMs: WINDOW });
    const day = 24 * 60 * 60_000;
    const verdicts: unknown[] = [];
    let i = 0;
    for (let now = 0; now < day; now += WINDOW + 1_000, i++) {
      // The fresh key about to start: hashing would put it in a shared cell unless the host is suspect.
      expect(hosts.stage(HOST_A, now), `fresh key ${i} at ${now} ms`).toBe(i === 0 ? null : 'new-apis');
      verdicts.push(hosts.blame(api(`fresh-${i}`), now));
    }
    // Only its first abort reached a shared cell (the neighbour's); never two within a window: not moved.
    expect(verdicts[0]).toEqual({ action: 'suspect' });
    expect(verdicts.slice(1).every((v) => v === null)).toBe(true);
    expect(i).toBeGreaterThan(130);
  });

  it('with --host-abort-limit 1, moves the host at its first abort', () => {
    const hosts = new HostFaults({ aborts: 1, windowMs: WINDOW });
    expect(hosts.blame(api('k1'), 0)).toEqual({ action: 'move' });
  });

  it('pauses every API of a moved host with each new API of it that aborts a cell, the pause doubling up to 5 min', () => {
    const hosts = new HostFaults({ aborts: 2, windowMs: WINDOW });
    hosts.blame(api('k1'), 0);
    hosts.blame(api('k2'), 1_000);
    expect(hosts.blame(api('k3'), 2_000)).toEqual({ action: 'pause', forMs: 1_000 });
    expect(hosts.admit(HOST_A, 2_500)).toBe(500);
    expect(hosts.admit(HOST_A, 3_000)).toBe(0);
    // The same API again: per-API business.
    expect(hosts.blame(api('k3'), 4_000)).toBeNull();
    expect(hosts.blame(api('k4'), 5_000)).toEqual({ action: 'pause', forMs: 2_000 });
    let verdict = null;
    for (let i = 5; i < 20; i++) verdict = hosts.blame(api(`k${i}`), 10_000 + i);
    expect(verdict).toEqual({ action: 'pause', forMs: 5 * 60_000 });
    // A quiet window forgets the doubling; the host stays moved.
    const later = 10_000 + 20 + WINDOW;
    expect(hosts.blame(api('k99'), later)).toEqual({ action: 'pause', forMs: 1_000 });
    expect(hosts.stage(HOST_A, later)).toBe('all-apis');
  });

  it('tells each decision with what is left of it, and adopts those of other instances without telling them back', () => {
    const hosts = new HostFaults({ aborts: 2, windowMs: WINDOW });
    const told: unknown[] = [];
    hosts.decided = (host, decision) => told.push({ ...host, ...decision });
    hosts.blame(api('k1'), 0);
    hosts.blame(api('k2'), 1_000);
    hosts.blame(api('k3'), 2_000);
    expect(told).toEqual([
      { host: A, env: 'dev', suspect: true, moved: false, strikes: 0, pausedForMs: 0 },
      { host: A, env: 'dev', suspect: true, moved: true, strikes: 0, pausedForMs: 0 },
      { host: A, env: 'dev', suspect: true, moved: true, strikes: 1, pausedForMs: 1_000 },
    ]);

    const other = new HostFaults({ aborts: 2, windowMs: WINDOW });
    other.decided = () => told.push('told back');
    const B = { host: 'b.example', env: 'pro' };
    expect(other.adopt(B, { suspect: true, moved: false, strikes: 0, pausedForMs: 0 }, 0)).toBe('suspect');
    expect(other.stage(B, 100 * WINDOW)).toBe('new-apis');
    expect(other.adopt(B, { suspect: true, moved: false, strikes: 0, pausedForMs: 0 }, 100)).toBeNull();
    expect(other.adopt(B, { suspect: true, moved: true, strikes: 0, pausedForMs: 0 }, 200)).toBe('moved');
    expect(other.adopt(B, { suspect: true, moved: true, strikes: 2, pausedForMs: 2_000 }, 300)).toBe('paused');
    expect(other.admit(B, 1_300)).toBe(1_000);
    // Never undone by an older notice.
    expect(other.adopt(B, { suspect: false, moved: false, strikes: 1, pausedForMs: 500 }, 400)).toBeNull();
    expect(other.placement(B)).toMatchObject({ suspect: true, moved: true, strikes: 2, pausedUntil: 2_300 });
    expect(told).toHaveLength(3);
  });
});

describe('FaultPolicy.blame', () => {
  it('says whether the blame is certain: a running API or the one the router killed the cell for, not a guess', () => {
    const faults = new FaultPolicy();
    faults.noteLostWork(api('lost'), 0, 1_000);
    expect(faults.blame(0, 1_010, [api('running')])).toEqual({ apis: [api('running')], certain: true });
    faults.noteLostWork(api('lost'), 0, 2_000);
    faults.noteLostWork(api('stuck'), 0, 2_000, true);
    expect(faults.blame(0, 2_010, [])).toEqual({ apis: [api('stuck')], certain: true });
    faults.noteLostWork(api('lost'), 1, 3_000);
    expect(faults.blame(1, 3_010, [])).toEqual({ apis: [api('lost')], certain: false });
  });
});
