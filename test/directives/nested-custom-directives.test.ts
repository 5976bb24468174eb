import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcess, type InProcessApis } from '../helpers/in-process-apis.js';
import { untilNotBusy } from '../helpers/until-not-busy.js';

// Issue 28 item 7: a custom directive runs another custom directive of its API with state.run, as
// it runs built-ins; the chain shares the first call's limits, and nesting stops at 8 (508).

let anvil: InProcessApis;

beforeAll(async () => {
  anvil = await startInProcess({
    apis: {
      nest: {
        'api.yaml': `key: nest
debug: true
limits: { cpuMs: 1000 }
endpoints:
  get /compose:
    Outer: { directive: Outer, factor: 10 }
  get /recurse:
    Catch: { directive: CatchRecursion }
  get /burn:
    Burn: { directive: Burner, ms: 900 }
    Reply: { directive: ModifyMessage, body: { burnt: true } }
  get /burn-twice:
    Burn: { directive: BurnThenCall, ms: 900 }
  get /unknown:
    Call: { directive: CallUnknown }
after:
  OnError: { directive: OnError, groups: [ERROR_FLOW] }
`,
        'Directives/Outer.js': `export default async function (state, config) {
  await state.run('Inner', { n: 4, factor: config.factor });
  await state.run('AsyncInner', { text: 'awaited' });
  await state.run('ModifyMessage', { status: 201, body: { inner: state.memory.get('inner'), asyncInner: state.memory.get('asyncInner') } });
}
`,
        'Directives/Inner.js': `export default function (state, config) {
  state.memory.set('inner', config.n * config.factor);
}
`,
        'Directives/AsyncInner.js': `export default async function (state, config) {
  await state.run('SetMemory', { target: 'asyncInner', value: config.text });
}
`,
        'Directives/Recurse.js': `export default async function (state, config) {
  state.memory.set('depth', config.depth);
  await state.run('Recurse', { depth: config.depth + 1 });
}
`,
        'Directives/CatchRecursion.js': `export default async function (state) {
  try {
    await state.run('Recurse', { depth: 1 });
  } catch (error) {
    state.message.body = { status: error.status, message: error.message, depth: state.memory.get('depth') };
  }
}
`,
        'Directives/Burner.js': `export default function (state, config) {
  const until = Date.now() + config.ms;
  while (Date.now() < until) { /* CPU */ }
}
`,
        'Directives/BurnThenCall.js': `export default async function (state, config) {
  const until = Date.now() + config.ms;
  while (Date.now() < until) { /* CPU */ }
  await state.run('Burner', { ms: config.ms });
  state.message.body = { survived: true };
}
`,
        'Directives/CallUnknown.js': `export default async function (state) {
  await state.run('Nope', {});
}
`,
      },
    },
  });
});
afterAll(async () => anvil?.dispose());

describe('custom directives calling custom directives (state.run)', () => {
  it('run sync and async custom directives of the same API against the same request', async () => {
    const reply = await anvil.request('/nest/compose');
    expect(reply.status).toBe(201);
    expect(reply.json()).toEqual({ inner: 40, asyncInner: 'awaited' });
  });

  it('stop a directive that runs itself at 8 nested calls with 508, which the caller may catch', async () => {
    const reply = await anvil.request('/nest/recurse');
    expect(reply.status).toBe(200);
    expect(reply.json()).toEqual({ status: 508, message: expect.stringContaining('more than 8 deep'), depth: 8 });
  });

  // The burners spin for 900 ms of the clock each; the CPU they use is what the thread got meanwhile.
  // Alone, one ends before its timeout (1000 ms); after the first, the second's timeout is what the
  // first left of the CPU time, and stops it (a breach) unless the thread ran less than ~1/8 of the time.
  it("share the first call's CPU limit: each call alone fits, the chain does not, and its breach is the caller's", async () => {
    expect((await untilNotBusy(() => anvil.request('/nest/burn'))).json()).toEqual({ burnt: true });
    const reply = await untilNotBusy(() => anvil.request('/nest/burn-twice'));
    expect(reply.status).toBe(500);
    expect(reply.json().error).toBe('Burner used more than its 1000 ms of CPU time');
    // The sandbox was reset by the breach; the next call gets a fresh one.
    expect((await anvil.request('/nest/compose')).status).toBe(201);
  });

  it('name what is missing when there is no directive of that name', async () => {
    const reply = await anvil.request('/nest/unknown');
    expect(reply.status).toBe(500);
    expect(reply.json().error).toContain(
      'run("Nope"): there is no built-in directive or Directives/Nope.js of that name',
    );
  });
});
