import { describe, expect, it } from 'vitest';
import type { ApiDefinition, EntryDefinition } from '../../src/shared/api-model/types.js';
import { passedOn } from '../../src/front/placement/internal-headers.js';
import { rendezvousOwner } from '../../src/front/placement/rendezvous.js';
import { keepsLocalState } from '../../src/deploy/releases/local-state.js';

// Cluster mode's placement, its pure parts: which releases are placed, the rendezvous owner, and
// the headers a forwarded request keeps.

function entry(directive: string, params: Record<string, unknown> = {}): EntryDefinition {
  return {
    label: directive,
    directive,
    groups: ['normal_flow'],
    params,
    where: { file: 'api.yaml', line: 1, column: 1 },
  };
}

function api(entries: EntryDefinition[], database?: 'postgres'): ApiDefinition {
  return {
    key: 'x',
    debug: false,
    limits: {},
    before: [],
    after: [],
    endpoints: [{ verb: 'get', path: '/', entries, where: { file: 'api.yaml', line: 1, column: 1 } }],
    ...(database ? { database } : {}),
  };
}

describe('which releases keep data on the instance (placed in cluster mode)', () => {
  it('places an API that uses its database or its stored files', () => {
    expect(keepsLocalState(api([entry('DatabaseQuery', { sql: 'select 1', target: 'x' })]), [])).toBe(true);
    expect(keepsLocalState(api([entry('SaveFile', { name: 'a', content: 'b' })]), [])).toBe(true);
    expect(keepsLocalState(api([entry('ServeStatic', { file: 'a', storage: true })]), [])).toBe(true);
  });

  it('places an API with a custom directive (its state.db is not visible from outside)', () => {
    expect(keepsLocalState(api([entry('ReadNote')]), ['ReadNote'])).toBe(true);
  });

  it('does not place an API without state of its own, nor a database: postgres one', () => {
    expect(keepsLocalState(api([entry('ModifyMessage', { body: 'x' }), entry('Ping')]), [])).toBe(false);
    expect(keepsLocalState(api([entry('ServeStatic', { file: 'index.html' })]), [])).toBe(false);
    expect(keepsLocalState(api([entry('CachedFileSet', { name: 'a', content: 'b' })]), [])).toBe(false);
    expect(
      keepsLocalState(api([entry('DatabaseQuery', { sql: 'select 1', target: 'x' })], 'postgres'), ['Custom']),
    ).toBe(false);
  });

  it('follows ExecuteIf to the directive it runs, and assumes state when an alias names it', () => {
    expect(
      keepsLocalState(
        api([entry('ExecuteIf', { if: true, execute: 'DatabaseQuery', sql: 'select 1', mode: 'run' })]),
        [],
      ),
    ).toBe(true);
    expect(
      keepsLocalState(api([entry('ExecuteIf', { if: true, execute: 'SetMemory', target: 'a', value: 1 })]), []),
    ).toBe(false);
    expect(keepsLocalState(api([entry('ExecuteIf', { if: true, execute: '$.memory.which' })]), [])).toBe(true);
  });
});

describe('rendezvous owner', () => {
  it('is the same answer from any order of the same instances, and none without one', () => {
    const ids = ['a1', 'b2', 'c3', 'd4'];
    const owner = rendezvousOwner('localhost/notes', ids);
    expect(ids).toContain(owner);
    expect(rendezvousOwner('localhost/notes', [...ids].reverse())).toBe(owner);
    expect(rendezvousOwner('localhost/notes', [])).toBeNull();
  });

  it('moves an API only when its owner leaves', () => {
    const ids = Array.from({ length: 5 }, (_, i) => `instance-${i}`);
    const apis = Array.from({ length: 200 }, (_, i) => `localhost/api-${i}`);
    const before = new Map(apis.map((a) => [a, rendezvousOwner(a, ids)]));
    const without = ids.filter((id) => id !== 'instance-2');
    for (const a of apis) {
      const after = rendezvousOwner(a, without);
      if (before.get(a) !== 'instance-2') expect(after).toBe(before.get(a));
      else expect(after).not.toBe('instance-2');
    }
    // Spread over the instances, not all on one.
    expect(new Set(before.values()).size).toBe(5);
  });
});

describe('headers of a forwarded request or answer', () => {
  it("keeps the message's headers (Host, length, repeats) and drops the connection's and the internal ones", () => {
    const raw = [
      'Host',
      'localhost',
      'Content-Length',
      '3',
      'Connection',
      'keep-alive, x-hop',
      'X-Hop',
      '1',
      'Keep-Alive',
      'timeout=5',
      'Set-Cookie',
      'a=1',
      'set-cookie',
      'b=2',
      'Anvil-Cluster-Secret',
      'guess',
      'anvil-client-address',
      '10.0.0.1',
      'TE',
      'trailers',
    ];
    expect(passedOn(raw)).toEqual({ host: 'localhost', 'content-length': '3', 'set-cookie': ['a=1', 'b=2'] });
  });
});
