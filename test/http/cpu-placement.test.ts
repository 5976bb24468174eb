import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lowPriorityCpus, parseCpuList } from '../../src/cell/process/low-priority-cpus.js';
import { statField } from '../helpers/cells.js';
import { eventually, startInstance, type TestInstance } from '../helpers/instance.js';
import { waitFor } from '../helpers/wait-for.js';

// An API that keeps the CPU busy is moved to the low-priority cell (nice 19, confined to the last
// quarter of the CPUs), without failing a request on the way; a light API stays where it was.

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
    apis: {
      hog: { 'api.yaml': HOG, 'Directives/Burn.js': BURN },
      light: { 'api.yaml': 'key: light\nendpoints:\n  get /ping:\n    Ping: { directive: Ping }\n' },
    },
  });
});
afterAll(async () => anvil?.dispose());

function childrenOf(parent: number): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map(Number)
    .filter((pid) => ifAlive(() => statField(pid, 4)) === parent);
}

function cmdline(pid: number): string {
  return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
}

const niceOf = (pid: number | string) => statField(pid, 19);
const threadsOf = (pid: number) => readdirSync(`/proc/${pid}/task`).map((tid) => `${pid}/task/${tid}`);
/** The CPUs a process (or `pid/task/tid`) may run on, from /proc. */
const cpusOf = (pid: number | string) =>
  /^Cpus_allowed_list:\s*(\S+)$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]!;
const HAS_TASKSET = existsSync('/usr/bin/taskset') || existsSync('/bin/taskset');
/** What `read` returns, or undefined when the thread it reads has ended meanwhile. */
function ifAlive<T>(read: () => T): T | undefined {
  try {
    return read();
  } catch {
    return undefined;
  }
}

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
      while (moved === undefined && Date.now() < deadline)
        lightStatuses.push((await anvil.request('/light/ping')).status);
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

    // The new cell is a child of the instance started with --nice 19, and every one of its threads
    // (V8's and libuv's, started before it lowered its priority, included) runs at that priority.
    const low = await eventually(() =>
      childrenOf(anvil.pid).find((pid) => cmdline(pid).includes(`--cell ${moved!.cell} --nice 19`)),
    );
    // The cell lowers its main thread, then each other thread in turn: wait until it went through them
    // (a loaded machine may pause it between the two).
    await eventually(() => threadsOf(low).every((thread) => [undefined, 19].includes(ifAlive(() => niceOf(thread)))));
    // (A thread that ends while it is read is left out.)
    const lowThreads = threadsOf(low)
      .map((thread) => ({
        thread,
        nice: ifAlive(() => niceOf(thread)),
        cpus: ifAlive(() => parseCpuList(cpusOf(thread))),
      }))
      .filter((t) => t.nice !== undefined && t.cpus !== undefined);
    expect(lowThreads.length).toBeGreaterThan(4);
    for (const { thread, nice } of lowThreads) expect([thread, nice]).toEqual([thread, 19]);
    // With taskset at hand and two CPUs or more, it runs on the instance's last CPUs only.
    const instanceCpus = parseCpuList(cpusOf(anvil.pid))!;
    if (HAS_TASKSET && instanceCpus.length >= 2) {
      for (const { cpus } of lowThreads) {
        expect(cpus!.length).toBeLessThan(instanceCpus.length);
        expect(cpus!.at(-1)).toBe(instanceCpus.at(-1));
      }
    }
    // The other cells run every thread a little below the router (nice 5), on all the instance's
    // CPUs; the router itself stays at nice 0.
    const normalCells = childrenOf(anvil.pid).filter((p) => p !== low && cmdline(p).includes('--cell '));
    expect(normalCells.length).toBeGreaterThan(0);
    for (const pid of normalCells) {
      expect(statField(pid, 41)).toBe(0);
      expect(cpusOf(pid)).toBe(cpusOf(anvil.pid));
      const threads = threadsOf(pid)
        .map((thread) => ({ thread, nice: ifAlive(() => niceOf(thread)) }))
        .filter((t) => t.nice !== undefined);
      expect(threads.length).toBeGreaterThan(4);
      for (const { thread, nice } of threads) expect([thread, nice]).toEqual([thread, 5]);
    }
    expect(niceOf(anvil.pid)).toBe(0);
    expect(anvil.logLines().some((l) => l.api === 'light' && String(l.msg).includes('low-priority'))).toBe(false);
  });
});

describe('the CPUs of the low-priority cell', () => {
  it('are the last quarter of the allowed CPUs, at least one; none with a single CPU or an unreadable list', () => {
    expect(parseCpuList('0-3,8,10-11')).toEqual([0, 1, 2, 3, 8, 10, 11]);
    expect(lowPriorityCpus('0-1')).toBe('1');
    expect(lowPriorityCpus('0-7')).toBe('6,7');
    expect(lowPriorityCpus('0-3,8-11')).toBe('10,11');
    expect(lowPriorityCpus('2,5,9')).toBe('9');
    expect(lowPriorityCpus('0')).toBeNull();
    expect(lowPriorityCpus('zero-one')).toBeNull();
    expect(lowPriorityCpus(null)).toBeNull();
  });
});

describe('a thread left behind by a move to the low-priority cell', () => {
  let stuck: TestInstance;
  beforeAll(async () => {
    stuck = await startInstance({
      apis: {
        hog: {
          // Started: a row the test waits for, written just before the endless query (a Log line would
          // never leave the thread: its write waits for the event loop the query blocks).
          'api.yaml': `${HOG}  get /EndlessSql:\n    Started: { directive: DatabaseQuery, sql: "INSERT INTO started (n) VALUES (1)", mode: run }\n    Try: { directive: EndlessSql }\n`,
          'Assets/db/001-started.sql': 'CREATE TABLE started (n INTEGER);\n',
          'Directives/Burn.js': BURN,
          'Directives/EndlessSql.js': readFileSync(
            join(import.meta.dirname, '../fixtures/apis/killers/Directives/EndlessSql.js'),
            'utf8',
          ),
        },
      },
      // The move (a few seconds) must come before the stuck thread has been silent a request timeout.
      args: ['--request-timeout', '8s'],
    });
  });
  afterAll(async () => stuck?.dispose());

  it('is still watched: stuck in native code, it is terminated, then its cell is killed and the API quarantined', async () => {
    // Two threads; then one of them gets stuck in an endless query (its client gives up at the
    // request timeout; the thread does not).
    await Promise.all(Array.from({ length: 4 }, () => stuck.request('/hog/burn')));
    void stuck.request('/hog/EndlessSql').catch(() => {});
    await waitFor(() => startedRows(stuck) === 1, {
      what: 'GET /hog/EndlessSql to reach its endless query (its Started row)',
    });
    // Burning on the other thread makes the API CPU-heavy: it moves, and the stuck thread is retired
    // with its query still running.
    let moved = false;
    // Two burners, so that it keeps over half a core busy on a loaded machine too.
    const burner = Promise.all(
      [0, 1].map(async () => {
        while (!moved) await stuck.request('/hog/burn').catch(() => {});
      }),
    );
    let movedAt: number;
    try {
      movedAt = await eventually(
        () =>
          stuck.logLines().findIndex((l) => l.msg === 'API keeps the CPU busy; it now runs in the low-priority cell') +
          1,
        15_000,
      );
    } finally {
      // Also when it never moves: the burner must not go on against an instance that is gone.
      moved = true;
      await burner;
    }
    const loggedAt = (msg: string) => stuck.logLines().findIndex((l) => l.msg === msg && l.api === 'hog') + 1;
    const terminatedAt = await eventually(
      () => loggedAt('thread stuck past the request timeout; terminating it'),
      20_000,
    );
    // (The watchdog found it after the move, among the threads the move retired.)
    expect(terminatedAt).toBeGreaterThan(movedAt);
    await eventually(() => loggedAt('stuck thread did not stop; killing its cell'), 10_000);
    // As for any API whose thread cost a cell its life: quarantined, and it answers from there.
    await eventually(() => loggedAt('API quarantined in a cell of its own'), 10_000);
    await eventually(async () => (await stuck.request('/hog/burn')).status === 200, 10_000);
  }, 60_000);
});

/** Rows of the hog API's `started` table (0 before its database exists). */
function startedRows(instance: TestInstance): number {
  const file = join(instance.dataDir, 'localhost', 'dev', 'hog', 'db.sqlite');
  if (!existsSync(file)) return 0;
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    return db.prepare('SELECT count(*) FROM started').pluck().get() as number;
  } finally {
    db.close();
  }
}
