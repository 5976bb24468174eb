import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { bootstrapSnapshot } from '../../src/cell/sandbox-host/bootstrap-snapshot.js';
import { BridgeOp, EntryKind, type BridgeOpCode } from '../../src/cell/sandbox-host/bridge-ops.js';
import { SandboxContext } from '../../src/cell/sandbox-host/sandbox-context.js';

const bootstrapUrl = new URL('../../sandbox/bootstrap.js', import.meta.url);
const bootstrap = readFileSync(bootstrapUrl, 'utf8');
const tables = { entry: EntryKind, ops: BridgeOp } as const;

/** `const NAME = codeOf('table', 'name')` lines of the bootstrap: [constant, table, name]. */
function codesRead(): Array<[string, string, string]> {
  return [...bootstrap.matchAll(/const (\w+) = codeOf\('(\w+)', '(\w+)'\)/g)].map((m) => [m[1]!, m[2]!, m[3]!]);
}

describe('the bridge table (src/cell/sandbox-host/bridge-ops.ts) and sandbox/bootstrap.js', () => {
  it('has distinct codes in each table', () => {
    for (const table of Object.values(tables)) {
      const codes = Object.values(table);
      expect(new Set(codes).size).toBe(codes.length);
    }
  });

  it('the bootstrap reads every code of the table and no code it lacks, and uses each', () => {
    const read = codesRead();
    for (const [constant, table, name] of read) {
      expect(Object.keys(tables), `${constant}: no table "${table}"`).toContain(table);
      expect(Object.keys(tables[table as keyof typeof tables]), `${constant}: ${table} has no "${name}"`).toContain(
        name,
      );
      // Declared, then used at least once.
      expect(bootstrap.split(new RegExp(`\\b${constant}\\b`)).length - 1, `${constant} is never used`).toBeGreaterThan(
        1,
      );
    }
    for (const [table, codes] of Object.entries(tables)) {
      const names = read.filter(([, t]) => t === table).map(([, , name]) => name);
      expect(names.sort(), `codes of ${table} the bootstrap does not read`).toEqual(Object.keys(codes).sort());
    }
    // No code is written as a bare string or number outside the table.
    expect(bootstrap).not.toMatch(/host\('/);
  });

  it('each state operation reaches the host as its code, with the arguments the table gives it', () => {
    const { blob: snapshot, lockdown } = bootstrapSnapshot();
    const seen: unknown[][] = [];
    const host = (op: BridgeOpCode, callId: number, a: unknown, b: unknown): unknown => {
      seen.push(b === undefined ? (a === undefined ? [op] : [op, a]) : [op, a, b]);
      expect(callId).toBe(7);
      if (op === BridgeOp.run) return { ok: 1 };
      if (op === BridgeOp.refuse) return { error: { status: 500, message: 'too big' } };
      if (op === BridgeOp.groupsIsEnabled) return { ok: true };
      if (op === BridgeOp.memoryGet || op === BridgeOp.messageGet || op === BridgeOp.map || op === BridgeOp.dbGet)
        return { ok: null };
      return undefined;
    };
    const box = new SandboxContext({
      memoryMb: 32,
      valueMaxBytes: 32 * 2 ** 20,
      snapshot,
      lockdown,
      host,
      enter: () => {},
    });
    try {
      const code = `var __anvilDirective = { default: async (state) => {
        state.memory.get('k'); state.memory.set('k', 1);
        void state.message.verb; state.message.verb = 'PUT'; state.message.addHeader('x-a', 'b');
        state.groups.enable('g'); state.groups.disable('g'); state.groups.disableAll(); state.groups.isEnabled('g');
        state.map('m');
        state.db.all('q'); state.db.get('q', [1]); state.db.run('q');
        state.message.body = { a: 1 };
        const sparse = []; sparse[1e8] = 1;
        try { state.memory.set('big', sparse); } catch {}
        await state.run('Echo', { a: 1 });
      } };`;
      expect(box.load('All', code, 1_000)).toBeNull();
      expect(box.call(7, 'All', '{}', 'r-1', 1_000)).toBe(1);
      box.settle(7, 1, { ok: null }, 1_000);
    } finally {
      box.dispose();
    }
    expect(seen).toEqual([
      [BridgeOp.memoryGet, 'k'],
      [BridgeOp.memorySet, 'k', 1],
      [BridgeOp.messageGet, 'verb'],
      [BridgeOp.messageSet, 'verb', 'PUT'],
      [BridgeOp.messageAddHeader, 'x-a', 'b'],
      [BridgeOp.groupsEnable, 'g'],
      [BridgeOp.groupsDisable, 'g'],
      [BridgeOp.groupsDisableAll],
      [BridgeOp.groupsIsEnabled, 'g'],
      [BridgeOp.map, 'm'],
      [BridgeOp.dbAll, 'q', null],
      [BridgeOp.dbGet, 'q', [1]],
      [BridgeOp.dbRun, 'q', null],
      [BridgeOp.messageSet, 'bodyJson', '{"a":1}'],
      [BridgeOp.refuse, 'the value of memory.set("big")', 16 + 8 * (1e8 + 1)],
      [BridgeOp.run, 'Echo', { a: 1 }],
      [BridgeOp.done],
    ]);
    expect(new Set(seen.map(([op]) => op))).toEqual(new Set(Object.values(BridgeOp)));
  });
});
