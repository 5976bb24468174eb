import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backgroundLoad, type BackgroundLoad } from '../helpers/background-load.js';
import { eventually, startInstance, type TestInstance } from '../helpers/instance.js';
import { tarGz } from '../helpers/tarball.js';
import { untilNotBusy } from '../helpers/until-not-busy.js';

// One long-lived sandbox per API release per thread: module state and globals persist between the
// calls of one API on one thread (like a Worker's), never reach another API or release, and are
// gone after a breach. One cell and one thread per API, so every call of an API meets the same one
// (the tests that keep state come before those that burn CPU: a CPU-heavy API may be moved to the
// low-priority cell, onto new threads).

const COUNTER = `let calls = 0;
export default function Counter(state) {
  calls++;
  globalThis.seen = (globalThis.seen ?? 0) + 1;
  state.message.body = { module: calls, global: globalThis.seen };
}
`;

const STATE_API = (comment = '') => `key: state${comment}
limits: { memoryMb: 16, cpuMs: 100, wallMs: 1500 }
endpoints:
  get /counter:
    Count: { directive: Counter }
  get /burn:
    Burn: { directive: Burn }
  get /burn-while-one-waits:
    Burn: { directive: Burn, onlyWhileOneWaits: true }
  get /slow/{ms}:
    Slow: { directive: Slow, ms: $.message.pathParam.ms }
  get /builtins:
    Check: { directive: Builtins }
`;

const STATE_FILES = {
  'api.yaml': STATE_API(),
  'Directives/Counter.js': COUNTER,
  'Directives/Burn.js': `export default function (state, config) {
  if (config.onlyWhileOneWaits && !(globalThis.waiting > 0)) state.fail(409, 'no call is waiting yet');
  for (;;) {}
}
`,
  'Directives/Slow.js': `export default async function (state, config) {
  globalThis.waiting = (globalThis.waiting ?? 0) + 1;
  try {
    await state.run('Delay', { ms: Number(config.ms) });
  } finally {
    globalThis.waiting--;
  }
  state.message.body = { waited: Number(config.ms) };
}
`,
  // Ordinary code that assigns over inherited built-in properties, which a frozen realm must allow.
  'Directives/Builtins.js': `class NotFound extends Error {
  constructor(message) {
    super(message);
    this.name = 'NotFound';
  }
}
export default function (state) {
  const error = new NotFound('gone');
  const point = { x: 1 };
  point.toString = () => 'point';
  function Legacy() {}
  Legacy.prototype = Object.create(Object.prototype);
  Legacy.prototype.constructor = Legacy;
  let extend = null;
  try {
    Object.prototype.extra = 1;
  } catch (e) {
    extend = e.constructor.name;
  }
  state.message.body = { name: error.name, text: String(error), point: String(point), legacy: new Legacy().constructor === Legacy, extend };
}
`,
};

// Its own API: near its memory limit V8 collects garbage again and again, which takes CPU time, so
// a CPU limit as small as the state API's could come first.
const GROWING_FILES = {
  'api.yaml':
    'key: growing\nlimits: { memoryMb: 16, cpuMs: 2000, wallMs: 5000 }\nendpoints:\n  get /grow:\n    Grow: { directive: Grow }\n  get /counter:\n    Count: { directive: Counter }\n',
  'Directives/Counter.js': COUNTER,
  // 1 MiB more kept by the module on every call.
  'Directives/Grow.js': `const kept = [];
export default function (state) {
  kept.push(new Array(131072).fill(1.5));
  state.message.body = { kept: kept.length };
}
`,
};

let anvil: TestInstance;
let neighbour: BackgroundLoad;

beforeAll(async () => {
  anvil = await startInstance({
    apis: {
      state: STATE_FILES,
      growing: GROWING_FILES,
      twin: {
        'api.yaml': 'key: twin\nendpoints:\n  get /counter:\n    Count: { directive: Counter }\n',
        'Directives/Counter.js': COUNTER,
      },
      calm: { 'api.yaml': 'key: calm\nendpoints:\n  get /ping:\n    Ping: { directive: Ping }\n' },
    },
    args: ['--cells', '1', '--max-threads', '1'],
  });
  neighbour = backgroundLoad(anvil, '/calm/ping', 2);
});

afterAll(async () => {
  await neighbour?.stop();
  await anvil?.dispose();
});

const counter = async (key = 'state') =>
  (await anvil.request(`/${key}/counter`)).json() as { module: number; global: number };

async function expectLogged(text: string): Promise<void> {
  await eventually(() => anvil.output().includes(text));
}

describe('a long-lived sandbox per API release per thread', () => {
  it('keeps module state and globals between calls of one API on one thread', async () => {
    expect(await counter()).toEqual({ module: 1, global: 1 });
    expect(await counter()).toEqual({ module: 2, global: 2 });
    expect(await counter()).toEqual({ module: 3, global: 3 });
  });

  it('never shares them with another API, even one in the same cell with the same code', async () => {
    expect(await counter('twin')).toEqual({ module: 1, global: 1 });
    expect(await counter()).toEqual({ module: 4, global: 4 });
  });

  it('lets ordinary code override inherited built-ins on its own objects, but never change a built-in', async () => {
    expect((await anvil.request('/state/builtins')).json()).toEqual({
      name: 'NotFound',
      text: 'NotFound: gone',
      point: 'point',
      legacy: true,
      extend: 'TypeError',
    });
  });

  it('a call that awaits past its wall time fails with 504, and the sandbox (nothing of it was running) keeps its state', async () => {
    const before = await counter();
    const slow = await anvil.request('/state/slow/5000');
    expect(slow.status).toBe(504);
    await expectLogged('Slow ran longer than its 1500 ms');
    const moves = anvil
      .logLines()
      .filter((l) => /cell|thread|sandbox|reset/.test(String(l.msg)) && l.level !== 30)
      .map((l) => JSON.stringify(l));
    expect(
      (await counter()).module,
      moves.join('\n') +
        anvil
          .logLines()
          .slice(-15)
          .map((l) => JSON.stringify(l))
          .join('\n'),
    ).toBe(before.module + 1);
  });

  it('after a CPU breach the state is gone: the next call gets a fresh sandbox', async () => {
    expect((await counter()).module).toBeGreaterThan(1);
    expect((await untilNotBusy(() => anvil.request('/state/burn'))).status).toBe(500);
    await expectLogged('Burn used more than its 100 ms of CPU time');
    expect(await counter()).toEqual({ module: 1, global: 1 });
  });

  it('memory growth across calls ends in the memory error and a fresh sandbox; the neighbour answers throughout', async () => {
    expect(await counter('growing')).toEqual({ module: 1, global: 1 });
    // A call its timeout stopped while the loaded host starved its thread answers 503 and resets the
    // sandbox (untilNotBusy's note): the growth then starts again, and the test keeps calling.
    const statuses: number[] = [];
    const kept: number[] = [];
    for (let i = 0; i < 80 && !statuses.includes(500); i++) {
      const reply = await anvil.request('/growing/grow');
      statuses.push(reply.status);
      kept.push(reply.status === 200 ? (reply.json() as { kept: number }).kept : 0);
    }
    const grown = `${statuses.join(',')}\n${anvil
      .output()
      .split('\n')
      .filter((l) => l.includes('Grow'))
      .join('\n')}`;
    // Every call before the last one succeeded (or was starved), and the one just before it had kept
    // several MiB: the limit was crossed by growth across calls, not by one call.
    expect(
      statuses.slice(0, -1).every((s) => s === 200 || s === 503),
      grown,
    ).toBe(true);
    expect(kept.at(-2), grown).toBeGreaterThan(5);
    expect(statuses.at(-1)).toBe(500);
    await expectLogged('Grow used more than its 16 MiB of memory');
    expect((await anvil.request('/growing/grow')).json()).toEqual({ kept: 1 });
    expect(await counter('growing')).toEqual({ module: 1, global: 1 });
    expect(neighbour.statuses().length).toBeGreaterThan(20);
    expect(neighbour.statuses().every((s) => s === 200)).toBe(true);
  });

  it('calls that await share the sandbox: a breach meanwhile fails them with 503, the culprit with 500', async () => {
    const slow = anvil.request('/state/slow/1200');
    // The burn breaches its CPU limit (100 ms) while the slow call is in its Delay (1.2 s).
    await eventually(async () => (await anvil.request('/state/burn-while-one-waits')).status === 500);
    const reply = await slow;
    expect(reply.status).toBe(503);
    await expectLogged('its sandbox was reset (Burn breached its cpu limit)');
    expect((await anvil.request('/state/slow/10')).json()).toEqual({ waited: 10 });
  });

  it('a new release starts with fresh state', async () => {
    await counter();
    expect((await counter()).module).toBeGreaterThan(1);
    const deployed = await anvil.admin('/anvil/api', {
      method: 'POST',
      body: tarGz({ ...STATE_FILES, 'api.yaml': STATE_API('  # release two') }),
      headers: { 'content-type': 'application/gzip' },
    });
    expect(deployed.status).toBe(201);
    // The API sits in the low-priority cell after its breaches: on a loaded host its new thread is
    // the last to get a core.
    await eventually(async () => (await counter()).module === 1, 25_000);
  });
});
