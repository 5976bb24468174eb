import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assignCell } from '../../src/cell/process/assign.js';
import { formatApiId } from '../../src/shared/protocol/api-id.js';
import { backgroundLoad, type BackgroundLoad } from '../helpers/background-load.js';
import { cellOf } from '../helpers/cells.js';
import { anvilCli } from '../helpers/cli.js';
import { startInstance, type Reply, type TestInstance } from '../helpers/instance.js';
import { killerApi } from '../helpers/killer-api.js';
import { sample, scrapeMetrics } from '../helpers/metrics.js';
import { tarGz } from '../helpers/tarball.js';
import { waitFor, waitForStarted } from '../helpers/wait-for.js';

// Issue 41, case 2: quarantine per API key alone let one public host abort its neighbours' cell
// again with every fresh key it deployed (each running `new Array(5e7).fill(1)` once). Blame per
// host: after its first abort, every API of that host that starts goes to the host's quarantine
// cell, never to a shared one; --host-abort-limit (2) of its APIs aborting within the window move
// all of them there; each further one pauses the whole host.
const CELLS = 2;
const ATTACKER = { 'public-host': 'attacker.localhost', 'public-host-key': 'attacker-host-key-0123456789' };
const NEIGHBOUR = 'neighbour';
const neighbourCell = cellOf(NEIGHBOUR, CELLS);
/** Six fresh keys of the attacking host, every one hashed to the neighbour's cell. */
const bombKeys = Array.from({ length: 200 }, (_, i) => `fresh-${i}`)
  .filter((key) => assignCell(formatApiId({ host: ATTACKER['public-host'], env: 'dev', key }), CELLS) === neighbourCell)
  .slice(0, 6);

const neighbourApi = {
  'api.yaml': `key: ${NEIGHBOUR}
endpoints:
  get /ping:
    Ping: { directive: Ping }
  get /wait/{ms}:
    Started: { directive: Log }
    Wait: { directive: Delay, ms: $.message.pathParam.ms }
    Reply: { directive: ModifyMessage, body: { waited: $.message.pathParam.ms } }
`,
};

let anvil: TestInstance;
let load: BackgroundLoad;

beforeAll(async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'anvil-data-'));
  const added = anvilCli([
    'hosts',
    'add-public',
    ATTACKER['public-host'],
    '--env',
    'dev',
    '--key',
    ATTACKER['public-host-key'],
    '--data',
    dataDir,
  ]);
  expect(added.status, added.stderr).toBe(0);
  anvil = await startInstance({
    dataDir,
    apis: { [NEIGHBOUR]: neighbourApi },
    // Room for the allocations to abort their process on a loaded machine (sandbox-fatal.test.ts).
    args: ['--cells', String(CELLS), '--request-timeout', '12s', '--max-directive-cpu', '10s'],
  });
  load = backgroundLoad(anvil, `/${NEIGHBOUR}/ping`, 2);
});

afterAll(async () => {
  await load?.stop();
  await anvil?.dispose();
});

/** Deploys and publishes one API of the attacking host. */
async function deployAttacker(key: string): Promise<void> {
  const admin = { host: 'admin.localhost', headers: ATTACKER };
  const deployed = await anvil.request('/anvil/api', {
    ...admin,
    method: 'POST',
    body: tarGz(killerApi(key, ['ArrayFill'])),
    headers: { ...ATTACKER, 'content-type': 'application/gzip' },
  });
  expect(deployed.status, deployed.text).toBe(201);
  const publish = await anvil.request(`/anvil/api/${key}`, {
    ...admin,
    method: 'PUT',
    body: JSON.stringify({ active: true, release: deployed.json().release, public: true }),
    headers: { ...ATTACKER, 'content-type': 'application/json' },
  });
  expect(publish.status, publish.text).toBe(204);
}

const cellDeaths = (cell: number) =>
  anvil.logLines().filter((l) => l.msg === 'cell died; restarting it' && l.cell === cell);

describe('a host aborting its neighbour’s cell with fresh API keys', () => {
  it('costs the neighbour (another host) only what it had in flight at the first abort: every later key starts in the host’s quarantine cell', async () => {
    expect(bombKeys).toHaveLength(6);
    expect((await anvil.request(`/${NEIGHBOUR}/ping`)).status).toBe(200);

    // Before each bomb the neighbour has a request in flight in its cell, long enough to outlast it.
    const inFlight: Array<Promise<Reply>> = [];
    const bombs: number[] = [];
    const refusals: Reply[] = [];
    let pingsAtFirstAbort = 0;
    for (const [i, key] of bombKeys.entries()) {
      await deployAttacker(key);
      inFlight.push(anvil.request(`/${NEIGHBOUR}/wait/8000`));
      await waitForStarted(anvil, NEIGHBOUR, (l) => l.route === 'get /wait/{ms}', {
        what: `neighbour request ${i + 1}`,
        count: i + 1,
        timeoutMs: 20_000,
      });
      const bomb = await anvil.request(`/${key}/ArrayFill`, { host: ATTACKER['public-host'] });
      bombs.push(bomb.status);
      if (bomb.status === 503) refusals.push(bomb);
      // Each abort (or pause) is judged before the next key is deployed.
      if (bomb.status === 502)
        await waitFor(
          () =>
            anvil
              .logLines()
              .some(
                (l) =>
                  l.msg === 'cell died; restarting it' &&
                  (l.runningTenantCode as string[]).includes(`${ATTACKER['public-host']}/dev/${key}`),
              ),
          { what: `the abort of ${key}`, timeoutMs: 15_000 },
        );
      if (i === 0) {
        // The background load's requests in flight at the first abort failed with it; the rest must not.
        // Counted once each client has had replies since (a reply to a request in flight at the abort
        // may come after the log line says so: CI at 65f6836 saw its 502 just after).
        const before = load.replies.length;
        await waitFor(() => load.replies.length >= before + 10, {
          what: 'the neighbour served again after its cell restarted',
          timeoutMs: 15_000,
        });
        pingsAtFirstAbort = load.replies.length;
      }
    }
    const neighbourReplies = await Promise.all(inFlight);

    // The attacker's requests failed (502: it aborted its cell; 503: its host was paused).
    expect(bombs.every((s) => s === 502 || s === 503)).toBe(true);
    expect(bombs[0]).toBe(502);
    for (const refused of refusals) {
      expect(refused.json().error).toMatch(/paused/);
      expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    }
    // The neighbour's cell died once, of the first key; every later abort was in a quarantine cell.
    expect(cellDeaths(neighbourCell)).toHaveLength(1);
    expect(cellDeaths(neighbourCell)[0]!.runningTenantCode).toEqual([`${ATTACKER['public-host']}/dev/${bombKeys[0]}`]);
    // Only the neighbour's request in flight at the first abort failed.
    expect(neighbourReplies.slice(1).map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    // Of the pings sent back to back by 2 clients, at most those 2 in flight at the first abort failed.
    const statuses = load.statuses();
    expect(statuses.slice(0, pingsAtFirstAbort).filter((s) => s !== 200).length).toBeLessThanOrEqual(2);
    expect(statuses.slice(pingsAtFirstAbort).filter((s) => s !== 200)).toEqual([]);

    // The host was told: log lines, its overview, the metrics.
    const suspect = anvil
      .logLines()
      .find((l) => l.msg === 'host suspect: its APIs that start from now on start in its quarantine cell');
    expect(suspect).toMatchObject({ host: ATTACKER['public-host'], api: bombKeys[0], cell: neighbourCell });
    const moved = anvil
      .logLines()
      .find(
        (l) => l.msg === 'host moved: its APIs aborted cells too often; all of them now run in its quarantine cell',
      );
    expect(moved).toMatchObject({
      host: ATTACKER['public-host'],
      api: bombKeys[1],
      culprits: [bombKeys[0], bombKeys[1]],
      aborts: 2,
    });
    expect(
      anvil
        .logLines()
        .some(
          (l) => l.msg === 'host paused: one more of its APIs aborted a cell' && l.host === ATTACKER['public-host'],
        ),
    ).toBe(true);
    const overview = (await anvil.request('/anvil/overview', { host: 'admin.localhost', headers: ATTACKER })).json();
    expect(overview.faults).toMatchObject({ stage: 'all-apis', abortLimit: 2, windowSeconds: 600 });
    expect(overview.faults.culprits).toEqual(expect.arrayContaining([bombKeys[0], bombKeys[1]]));
    const neighbourOverview = (await anvil.admin('/anvil/overview')).json();
    expect(neighbourOverview.faults).toBeNull();
    const metrics = await scrapeMetrics(anvil);
    expect(sample(metrics, 'anvil_host_quarantine', { host: ATTACKER['public-host'], stage: 'all-apis' })).toBe(1);
    expect(sample(metrics, 'anvil_cell_aborts_total', { host: ATTACKER['public-host'], api: bombKeys[0]! })).toBe(1);
    expect(sample(metrics, 'anvil_host_quarantine', { host: 'localhost', stage: 'all-apis' })).toBeUndefined();
  }, 180_000);

  it('pauses every API of the moved host with each further culprit, the pause doubling', () => {
    const paused = anvil.logLines().filter((l) => l.msg === 'host paused: one more of its APIs aborted a cell');
    expect(paused.length).toBeGreaterThanOrEqual(1);
    const pausedMs = paused.map((l) => l.pausedMs as number);
    expect(pausedMs).toEqual(pausedMs.map((_, i) => 1_000 * 2 ** i));
    // The neighbour's cell died once in all.
    expect(cellDeaths(neighbourCell)).toHaveLength(1);
  });
});
