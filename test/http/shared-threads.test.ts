import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, startInstance, type TestInstance } from '../helpers/instance.js';
import { sample, scrapeMetrics } from '../helpers/metrics.js';

// Quiet APIs share their cell's threads, each in its own isolate. One cell with one shared thread:
// every quiet API below is served by the same thread (anvil_actor_shared_threads says each has its
// place on a shared thread), and none of them may see another's globals, module state, database, nor lose its sandbox to another's breach.

const TENANT = (key: string, limits = '') => `key: ${key}
${limits}endpoints:
  get /visit:
    Visit: { directive: Visit }
  get /secret:
    Secret: { directive: Secret }
  get /spin:
    Spin: { directive: Spin }
`;

const FILES = (key: string, limits = '') => ({
  'api.yaml': TENANT(key, limits),
  // Module state, a global and a database row, each marked with the API's key.
  'Directives/Visit.js': `let calls = 0;
export default function Visit(state) {
  calls++;
  const before = globalThis.owner ?? null;
  globalThis.owner = ${JSON.stringify(key)};
  state.db.run('CREATE TABLE IF NOT EXISTS marks (owner TEXT)');
  state.db.run('INSERT INTO marks (owner) VALUES (?)', [${JSON.stringify(key)}]);
  const owners = state.db.all('SELECT DISTINCT owner FROM marks').map((row) => row.owner);
  state.message.body = { calls, before, owners, keys: Object.keys(globalThis).filter((name) => name.startsWith('secret')) };
}
`,
  'Directives/Secret.js': `export default function Secret(state) {
  globalThis['secret_${key}'] = 'only ${key} knows';
  state.message.body = { kept: true };
}
`,
  'Directives/Spin.js': `export default function Spin() {
  for (;;) {}
}
`,
});

let anvil: TestInstance;

beforeAll(async () => {
  anvil = await startInstance({
    // delta asks for calls longer than a shared thread's slice (the default 50 ms of CPU).
    apis: {
      alpha: FILES('alpha'),
      beta: FILES('beta'),
      gamma: FILES('gamma'),
      delta: FILES('delta', 'limits: { cpuMs: 200 }\n'),
    },
    args: ['--cells', '1', '--shared-threads', '1'],
  });
});
afterAll(async () => anvil?.dispose());

const placeOnSharedThread = async (api: string) =>
  sample(await scrapeMetrics(anvil), 'anvil_actor_shared_threads', { host: 'localhost', api }) ?? 0;

describe('APIs on one shared thread', () => {
  it('are each served from the one shared thread of the cell', async () => {
    for (const api of ['alpha', 'beta', 'gamma']) expect((await anvil.request(`/${api}/visit`)).status).toBe(200);
    for (const api of ['alpha', 'beta', 'gamma']) expect(await placeOnSharedThread(api)).toBe(1);
  });

  it("never see another's globals, module state or database", async () => {
    expect((await anvil.request('/alpha/secret')).status).toBe(200);
    for (let round = 0; round < 3; round++) {
      for (const api of ['alpha', 'beta', 'gamma']) {
        const reply = await anvil.request(`/${api}/visit`);
        expect(reply.status).toBe(200);
        const body = reply.json() as { calls: number; before: string | null; owners: string[]; keys: string[] };
        // Its own module state and global only: the last API to run on the thread left its own.
        expect(body.before).toBe(api);
        expect(body.owners).toEqual([api]);
        expect(body.keys).toEqual(api === 'alpha' ? ['secret_alpha'] : []);
      }
    }
  });

  it("lose only the breaching API's sandbox to its CPU breach; the breaching API gets a thread of its own", async () => {
    const calls = async (api: string) => ((await anvil.request(`/${api}/visit`)).json() as { calls: number }).calls;
    const alphaBefore = await calls('alpha');
    const betaBefore = await calls('beta');
    // Spinning until its 50 ms CPU limit: it held the shared thread that long.
    const spin = await anvil.request('/gamma/spin');
    expect(spin.status).toBeGreaterThanOrEqual(500);
    // gamma's isolate was disposed: its module state starts over. The others' go on.
    expect(await calls('gamma')).toBe(1);
    expect(await calls('alpha')).toBe(alphaBefore + 1);
    expect(await calls('beta')).toBe(betaBefore + 1);
    // A call that long on a shared thread: gamma now has a thread of its own; the others stay.
    await eventually(async () => (await placeOnSharedThread('gamma')) === 0);
    expect(
      sample(await scrapeMetrics(anvil), 'anvil_actor_threads', { host: 'localhost', api: 'gamma' }),
    ).toBeGreaterThanOrEqual(1);
    expect(
      anvil
        .logLines()
        .some(
          (line) =>
            line.msg === 'API keeps a shared thread busy; it now has threads of its own' &&
            line.api === 'gamma' &&
            line.reason === 'a long custom directive call on a shared thread',
        ),
    ).toBe(true);
    for (const api of ['alpha', 'beta']) expect(await placeOnSharedThread(api)).toBe(1);
  });
});

describe('an API whose calls may be longer than a shared thread lets one be', () => {
  it('is given threads of its own before it runs anything on the shared thread', async () => {
    const reply = await anvil.request('/delta/visit');
    expect(reply.status).toBe(200);
    expect(await placeOnSharedThread('delta')).toBe(0);
    expect(
      sample(await scrapeMetrics(anvil), 'anvil_actor_threads', { host: 'localhost', api: 'delta' }),
    ).toBeGreaterThanOrEqual(1);
    expect(
      anvil
        .logLines()
        .some(
          (line) =>
            line.msg === 'API keeps a shared thread busy; it now has threads of its own' &&
            line.api === 'delta' &&
            line.reason === 'calls allowed longer than a shared thread gives',
        ),
    ).toBe(true);
  });
});

describe('an API with threads of its own that calms down', () => {
  it('gives them back: it is served from a shared thread again', async () => {
    // gamma got its own thread above (its CPU breach); now a light load, a request every 100 ms, for as long as it takes.
    let calm = false;
    const light = (async () => {
      while (!calm) {
        await anvil.request('/gamma/visit');
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    })();
    await eventually(async () => (await placeOnSharedThread('gamma')) === 1, 30_000, 200);
    calm = true;
    await light;
    expect(
      anvil
        .logLines()
        .some((line) => line.msg === 'API is quiet again; it now runs on a shared thread' && line.api === 'gamma'),
    ).toBe(true);
    expect((await anvil.request('/gamma/visit')).status).toBe(200);
  });
});
