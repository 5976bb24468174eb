import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, startInstance, type TestInstance } from '../helpers/instance.js';

// An API that keeps the CPU busy is moved to the low-priority cell (nice 10), without failing a
// request on the way; a light API stays where it was.

const HOG = `key: hog
limits: { cpuMs: 1000 }
endpoints:
  get /burn:
    Burn: { directive: Burn }
`;
const BURN = `export default (state) => {
  const end = Date.now() + 30;
  let n = 0;
  while (Date.now() < end) n++;
  state.message.body = { spins: n > 0 };
};
`;

let anvil: TestInstance;
beforeAll(async () => {
  anvil = await startInstance({
    apis: { hog: { 'api.yaml': HOG, 'Directives/Burn.js': BURN }, light: { 'api.yaml': 'key: light\nendpoints:\n  get /ping:\n    Ping: { directive: Ping }\n' } },
  });
});
afterAll(async () => anvil?.dispose());

function childrenOf(parent: number): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map(Number)
    .filter((pid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === parent;
      } catch {
        return false;
      }
    });
}

function cmdline(pid: number): string {
  return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
}

/** Field `n` of /proc/<pid>/stat (19: nice, 41: scheduling policy). */
function statField(pid: number, n: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[n - 3]);
}

const niceOf = (pid: number) => statField(pid, 19);
const SCHED_IDLE = 5;

describe('CPU-heavy APIs', () => {
  it('moves an API that keeps cores busy to the low-priority cell, and every request still succeeds', async () => {
    expect((await anvil.request('/light/ping')).status).toBe(200);
    const statuses = new Map<number, number>();
    let moved: Record<string, any> | undefined;
    const deadline = Date.now() + 20_000;
    const worker = async () => {
      while (moved === undefined && Date.now() < deadline) {
        const { status } = await anvil.request('/hog/burn');
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
        moved = anvil.logLines().find((l) => l.msg === 'API keeps the CPU busy; it now runs in the low-priority cell');
      }
    };
    // Meanwhile a light API is kept busy with cheap requests: traffic, not a hog.
    const lightStatuses: number[] = [];
    const light = async () => {
      while (moved === undefined && Date.now() < deadline) lightStatuses.push((await anvil.request('/light/ping')).status);
    };
    await Promise.all([worker(), worker(), worker(), worker(), light(), light()]);
    expect(lightStatuses.length).toBeGreaterThan(10);
    expect(lightStatuses.every((s) => s === 200)).toBe(true);
    expect(moved).toMatchObject({ api: 'hog', host: 'localhost' });
    expect(moved!.cores).toBeGreaterThanOrEqual(0.5);
    expect(moved!.msPerRequest === null || moved!.msPerRequest >= 5).toBe(true);

    // Requests in flight on the old threads finished there; the next ones run in the new cell.
    for (let i = 0; i < 4; i++) {
      const { status } = await anvil.request('/hog/burn');
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
    }
    expect([...statuses.keys()]).toEqual([200]);

    // The new cell is a child of the instance started with --nice 10, and runs at that priority.
    const low = await eventually(() => childrenOf(anvil.pid).find((pid) => cmdline(pid).includes(`--cell ${moved!.cell} --nice 10`)));
    // It lowers its own priority as it starts (before it starts any thread).
    await eventually(() => niceOf(low) === 10);
    // With Linux's chrt at hand it runs under SCHED_IDLE: it only gets a core no one else wants.
    if (existsSync('/usr/bin/chrt') || existsSync('/bin/chrt')) expect(statField(low, 41)).toBe(SCHED_IDLE);
    for (const pid of childrenOf(anvil.pid).filter((p) => p !== low)) expect(statField(pid, 41)).toBe(0);
    for (const pid of childrenOf(anvil.pid).filter((p) => p !== low)) expect(niceOf(pid)).toBe(0);
    expect(anvil.logLines().some((l) => l.api === 'light' && String(l.msg).includes('low-priority'))).toBe(false);
  });
});
