import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backgroundLoad } from '../helpers/background-load.js';
import { cellOf, cellPid, keysPerCell } from '../helpers/cells.js';
import { eventually, startInstance, type TestInstance } from '../helpers/instance.js';
import { waitFor, waitForStarted } from '../helpers/wait-for.js';

const api = (key: string) => ({
  'api.yaml': `key: ${key}
endpoints:
  get /ping:
    Ping: { directive: Ping }
  get /wait/{ms}:
    Started: { directive: Log }
    Wait: { directive: Delay, ms: $.message.pathParam.ms }
    Reply: { directive: ModifyMessage, body: { waited: $.message.pathParam.ms } }
`,
});

const [victim, neighbour] = keysPerCell('cellapi', 2) as [string, string];
let anvil: TestInstance;

beforeAll(async () => {
  anvil = await startInstance({ apis: { [victim]: api(victim), [neighbour]: api(neighbour) }, args: ['--cells', '2'] });
});
afterAll(async () => anvil?.dispose());

describe('a cell killed with SIGKILL', () => {
  it('fails only its in-flight requests with 502, holds new ones until it is back, and never touches the other cell', async () => {
    expect(cellOf(victim, 2)).not.toBe(cellOf(neighbour, 2));
    expect((await anvil.request(`/${victim}/ping`)).status).toBe(200);
    expect((await anvil.request(`/${neighbour}/ping`)).status).toBe(200);

    // Load on the neighbour for the whole episode.
    const load = backgroundLoad(anvil, `/${neighbour}/ping`, 8);

    const inFlight = anvil.request(`/${victim}/wait/5000`);
    await waitForStarted(anvil, victim, (l) => l.route === 'get /wait/{ms}', { what: `GET /${victim}/wait/5000` });
    const pid = cellPid(anvil.pid, cellOf(victim, 2));
    process.kill(pid, 'SIGKILL');

    const failed = await inFlight;
    expect(failed.status).toBe(502);
    expect(failed.json().error).toMatch(/Bad Gateway/);
    // Sent as soon as the router knew the cell was dead, while it restarts: held, then served.
    const held = await Promise.all(Array.from({ length: 5 }, () => anvil.request(`/${victim}/ping`)));
    expect(held.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    expect(held[0]!.json()).toEqual({ message: 'pong' });

    // The neighbour keeps answering after the victim's cell is back, not only while it was down.
    const answeredSoFar = load.replies.length;
    await waitFor(() => load.replies.length >= answeredSoFar + 20, {
      what: `20 more replies to the load on /${neighbour}/ping`,
    });
    await load.stop();
    expect(load.statuses().length).toBeGreaterThan(20);
    expect(load.statuses().every((s) => s === 200)).toBe(true);

    // The router did not restart; a new cell process took the place of the killed one.
    expect(anvil.child.exitCode).toBeNull();
    expect(cellPid(anvil.pid, cellOf(victim, 2))).not.toBe(pid);
    expect((await anvil.request('/anvil/health', { host: 'admin.localhost' })).status).toBe(200);
    await eventually(() =>
      anvil.logLines().some((l) => l.msg === 'cell died; restarting it' && l.cell === cellOf(victim, 2)),
    );
  });
});
