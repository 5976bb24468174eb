import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backgroundLoad, type BackgroundLoad } from '../helpers/background-load.js';
import { cellOf } from '../helpers/cells.js';
import { startInstance, type TestInstance } from '../helpers/instance.js';
import { untilNotBusy } from '../helpers/until-not-busy.js';
import { waitFor } from '../helpers/wait-for.js';

// The escape corpus (SECURITY.md): each attempt runs as a custom directive of the API `escapes`,
// limits { memoryMb: 32, cpuMs: 200, wallMs: 2000 }. Every attempt must fail, the router must never
// restart, no cell may die, and an API in the other cell must answer every request meanwhile.
const fixtures = join(import.meta.dirname, '../fixtures/apis');
const neighbourKey = Array.from({ length: 50 }, (_, i) => `neighbour-${i}`).find(
  (k) => cellOf(k, 2) !== cellOf('escapes', 2),
)!;

let anvil: TestInstance;
let routerPid: number;
let neighbour: BackgroundLoad;

beforeAll(async () => {
  anvil = await startInstance({
    apis: {
      escapes: join(fixtures, 'escapes'),
      [neighbourKey]: { 'api.yaml': `key: ${neighbourKey}\nendpoints:\n  get /ping:\n    Ping: { directive: Ping }\n` },
      // The same allocation bomb with CPU to spare: the memory limit is what stops it.
      bomb: {
        'api.yaml':
          'key: bomb\nlimits: { memoryMb: 16, cpuMs: 10000, wallMs: 20000 }\nendpoints:\n  get /:\n    Try: { directive: AllocationBomb }\n',
        'Directives/AllocationBomb.js': readFileSync(join(fixtures, 'escapes/Directives/AllocationBomb.js'), 'utf8'),
      },
      other: {
        'api.yaml':
          'key: other\nendpoints:\n  get /init:\n    Init: { directive: DatabaseQuery, sql: "CREATE TABLE IF NOT EXISTS secrets (v TEXT)", mode: run }\n',
      },
    },
    // The bomb API asks for 10 s of CPU: allocating up to the memory limit takes ~240 ms of CPU
    // (garbage collection near the limit), which a loaded host may stretch past the default 1 s cap.
    args: ['--cells', '2', '--max-directive-cpu', '10s', '--max-directive-wall', '20s'],
  });
  routerPid = anvil.pid;
  neighbour = backgroundLoad(anvil, `/${neighbourKey}/ping`);
});

afterAll(async () => {
  await neighbour?.stop();
  await anvil?.dispose();
});

const attempt = (name: string, query = '') => anvil.request(`/escapes/${name}${query}`);
/** An attempt that ran: a retry of one stopped on a starved thread (the cell is busy in CI). */
const ran = (name: string) => untilNotBusy(() => attempt(name));

describe('the escape corpus', () => {
  it('1. constructor chains reach only the isolate, never process/require/global', async () => {
    const reply = await attempt('ConstructorChain');
    expect(reply.json()).toMatchObject({ viaFacade: 'undefined/undefined/undefined', viaObject: 'undefined' });
  });

  it('2. `this` tricks find no host object on the global', async () => {
    expect((await attempt('ThisTricks')).json()).toEqual({ hostKeys: [], sameAsGlobal: true, strictThis: 'undefined' });
  });

  it('3. Error.prepareStackTrace sees no host file and no host function or receiver', async () => {
    const got = (await attempt('PrepareStackTrace')).json();
    expect(got.sites).toBeGreaterThan(0);
    expect(got.hostPaths).toEqual([]);
    expect(got.reachable).toBe(0);
  });

  it('4. a Proxy handed to the host is refused and its traps never run', async () => {
    expect((await attempt('ProxyValue')).json()).toEqual({
      error: expect.stringMatching(/could not be cloned/),
      stored: null,
      trapped: 0,
    });
  });

  it('5. symbols, descriptors and monkey-patching of the facade change nothing', async () => {
    expect((await attempt('SymbolsAndGetters')).json()).toEqual({
      reflected: 'GET',
      forged: 'TypeError',
      classPatch: 'TypeError',
      stored: { plain: 2 },
      unchanged: true,
      patchError: 'TypeError',
      defineError: 'TypeError',
      inherits: true,
      constructed: ['TypeError', 'TypeError'],
    });
  });

  it('6. a function handed to the host is refused', async () => {
    expect((await attempt('CloneFunction')).json()).toEqual({
      error: expect.stringMatching(/could not be cloned/),
      stored: null,
    });
  });

  it('7. globals that are a way around a limit, and Node globals, do not exist', async () => {
    const got = (await attempt('Globals')).json();
    for (const value of Object.values(got)) expect(value).toBe('undefined');
  });

  it('8. dynamic import() is refused', async () => {
    expect((await attempt('DynamicImport')).json().result).toMatch(/^refused/);
  });

  it('9. built-ins cannot be patched or polluted, so no request changes them for the next one', async () => {
    const refused = { proto: 'TypeError', json: 'TypeError', map: 'TypeError', jsonGlobal: 'TypeError' };
    const first = (await attempt('PolluteNext')).json();
    expect(first.refused).toEqual(refused);
    expect(first.before).toMatchObject({ proto: null, json: '{"a":1}', map: [2] });
    const second = (await attempt('PolluteNext')).json();
    expect(second.refused).toEqual(refused);
    // The API's own global may stay (its threads keep their context); the built-ins are intact.
    expect(second.before).toMatchObject({ proto: null, json: '{"a":1}', map: [2] });
  });

  it('10. work left running after the call never runs in a later call', async () => {
    expect((await attempt('AsyncLeak')).json()).toEqual({ returned: true });
    // A real-time wait: the leaked work is a 200 ms Delay started before the answer; the later calls
    // come after it fell due (nothing shows that it did: the call that started it is over).
    await new Promise((r) => setTimeout(r, 250));
    const later = await Promise.all(Array.from({ length: 5 }, () => attempt('Globals')));
    expect(later.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
  });

  it('11. an unhandled rejection fails that request only', async () => {
    expect((await attempt('UnhandledRejection')).status).toBe(500);
    expect((await attempt('Globals')).status).toBe(200);
  });

  it("12. SQL cannot reach another API's database or any other file", async () => {
    const otherDb = join(anvil.dataDir, 'localhost', 'dev', 'other', 'db.sqlite');
    expect((await anvil.request('/other/init')).status).toBe(200);
    expect(existsSync(otherDb)).toBe(true);
    const got = (await attempt('AttachOther', `?path=${encodeURIComponent(otherDb)}`)).json();
    for (const value of Object.values(got)) expect(value).toMatch(/^refused: SQL refused/);
    expect(existsSync(`${otherDb}.copy`)).toBe(false);
  });

  it('13. a huge string ends in an error for that request', async () => {
    expect((await attempt('HugeString')).status).toBe(500);
  });

  it('14. deep recursion ends in an error for that request', async () => {
    expect((await attempt('DeepRecursion')).status).toBe(500);
    await expectLogged('Maximum call stack size exceeded');
  });

  it('15. an infinite loop is stopped at its CPU limit: an error for that request', async () => {
    const reply = await ran('InfiniteLoop');
    expect(reply.status).toBe(500);
    await expectLogged('InfiniteLoop used more than its 200 ms of CPU time');
  });

  it('16. an infinite loop after an await is stopped too (its continuation runs with the CPU the call has left)', async () => {
    expect((await ran('AsyncInfiniteLoop')).status).toBe(500);
    await expectLogged('AsyncInfiniteLoop used more than its 200 ms of CPU time');
  });

  it('17. an allocation bomb ends in an error for that request (memory, CPU or wall-time limit, whichever comes first)', async () => {
    // Wall time comes first on a starved thread: V8 does not stop for its timeout while it collects garbage near the limit.
    expect([500, 504]).toContain((await ran('AllocationBomb')).status);
    await waitFor(() => /AllocationBomb (used more than its|ran longer than its)/.test(anvil.output()), {
      what: "the bomb's breach in the instance's log",
      timeoutMs: 2_000,
    });
    // A new isolate serves the next call.
    expect((await ran('Globals')).status).toBe(200);
    // With CPU to spare, the memory limit is what stops it.
    expect((await untilNotBusy(() => anvil.request('/bomb/'))).status).toBe(500);
    await expectLogged('AllocationBomb used more than its 16 MiB of memory');
  });

  it('never restarted the router, never lost a cell, and the neighbour answered every request', async () => {
    // Both cells answer after the last attempt (a cell that had died would be logged by then).
    expect((await attempt('Globals')).status).toBe(200);
    const answered = neighbour.statuses().length;
    await waitFor(() => neighbour.statuses().length > answered + 4, {
      what: `5 more answers of /${neighbourKey}/ping`,
    });
    expect(anvil.pid).toBe(routerPid);
    expect(anvil.child.exitCode).toBeNull();
    expect(anvil.logLines().filter((l) => /cell died|quarantined|paused/.test(l.msg))).toEqual([]);
    expect(neighbour.statuses().length).toBeGreaterThan(50);
    expect(neighbour.statuses().every((s) => s === 200)).toBe(true);
  });
});

async function expectLogged(text: string): Promise<void> {
  await waitFor(() => anvil.output().includes(text), { what: `"${text}" in the instance's log`, timeoutMs: 2_000 });
}
