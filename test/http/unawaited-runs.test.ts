import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInstance, type TestInstance } from '../helpers/instance.js';

// Issue 42: `state.run` work a custom directive starts stops with its call. A directive that fires
// thousands of LocalCalls it never awaits and returns (or breaches its CPU limit) used to have every
// one of them run after its call was over; now at most MAX_PENDING_RUNS (256) may be under way, of
// which MAX_RUNNING_RUNS (16) run at once, and those not begun when the call ends are dropped.

const MAX_PENDING_RUNS = 256;
const MAX_RUNNING_RUNS = 16;

let anvil: TestInstance;

beforeAll(async () => {
  anvil = await startInstance({
    apis: {
      flood: {
        'api.yaml': `key: flood
limits: { cpuMs: 1000 }
endpoints:
  get /run/{tag}:
    Flood: { directive: Flood, tag: $.message.pathParam.tag, spin: false }
  get /spin/{tag}:
    Flood: { directive: Flood, tag: $.message.pathParam.tag, spin: true }
  get /awaited/{tag}:
    All: { directive: AwaitAll, tag: $.message.pathParam.tag, n: 100 }
`,
        'Directives/AwaitAll.js': `export default async function (state, config) {
  const hit = { method: 'POST', path: '/counter/hit/' + config.tag };
  await Promise.all(Array.from({ length: config.n }, () => state.run('LocalCall', hit)));
  state.message.body = { done: config.n };
}
`,
        // One awaited call first (the count is at least 1 once the call is over), then 20 000 it
        // never awaits, until the host refuses one.
        'Directives/Flood.js': `export default async function (state, config) {
  const hit = { method: 'POST', path: '/counter/hit/' + config.tag };
  await state.run('LocalCall', hit);
  let started = 0;
  let refused = null;
  for (let i = 0; i < 20000; i++) {
    try {
      state.run('LocalCall', hit);
      started++;
    } catch (error) {
      refused = { status: error.status, message: error.message };
      break;
    }
  }
  if (config.spin) for (;;) {}
  state.message.body = { started, refused };
}
`,
      },
      counter: {
        'api.yaml': `key: counter
endpoints:
  post /hit/{tag}:
    Table: { directive: DatabaseQuery, sql: "CREATE TABLE IF NOT EXISTS hits (tag TEXT)", mode: run }
    Count: { directive: DatabaseQuery, sql: "INSERT INTO hits (tag) VALUES (?)", params: [$.message.pathParam.tag], mode: run }
  get /count/{tag}:
    Table: { directive: DatabaseQuery, sql: "CREATE TABLE IF NOT EXISTS hits (tag TEXT)", mode: run }
    Read: { directive: DatabaseQuery, sql: "SELECT COUNT(*) AS n FROM hits WHERE tag = ?", params: [$.message.pathParam.tag], target: rows }
    Reply: { directive: ModifyMessage, body: $.memory.rows }
`,
      },
    },
  });
});
afterAll(async () => anvil?.dispose());

async function count(tag: string): Promise<number> {
  const reply = await anvil.request(`/counter/count/${tag}`);
  expect(reply.status).toBe(200);
  return (reply.json() as Array<{ n: number }>)[0]!.n;
}

/**
 * The count once it no longer grows: three reads in a row give the same number. (The bound checked
 * holds at every moment with the fix; before it, thousands of calls kept arriving for seconds.)
 */
async function settledCount(tag: string): Promise<number> {
  let last = await count(tag);
  let same = 0;
  for (let round = 0; round < 200 && same < 3; round++) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    const now = await count(tag);
    same = now === last ? same + 1 : 0;
    last = now;
  }
  return last;
}

describe('state.run work stops with its call', () => {
  it('a directive that leaves 20 000 LocalCalls un-awaited: the 257th is refused in the isolate, and the count stops at the few that had begun', async () => {
    const reply = await anvil.request('/flood/run/returned');
    expect(reply.status).toBe(200);
    const body = reply.json() as { started: number; refused: { status: number; message: string } | null };
    expect(body.started).toBe(MAX_PENDING_RUNS);
    expect(body.refused?.status).toBe(500);
    expect(body.refused?.message).toContain(`already has ${MAX_PENDING_RUNS} runs under way`);
    const ran = await settledCount('returned');
    // The awaited one, and at most the runs that had begun when the call returned.
    expect(ran).toBeGreaterThanOrEqual(1);
    expect(ran).toBeLessThanOrEqual(1 + MAX_RUNNING_RUNS);
  });

  it('after a CPU breach, what the call started and had not begun never runs', async () => {
    const reply = await anvil.request('/flood/spin/breached');
    expect(reply.status).toBe(500);
    const ran = await settledCount('breached');
    expect(ran).toBeGreaterThanOrEqual(1);
    expect(ran).toBeLessThanOrEqual(1 + MAX_RUNNING_RUNS);
  });

  it('runs the call awaits all run, 16 at a time, the others in turn', async () => {
    const reply = await anvil.request('/flood/awaited/all');
    expect(reply.status).toBe(200);
    expect(reply.json()).toEqual({ done: 100 });
    expect(await count('all')).toBe(100);
  });

  it('the API serves on: the same request again gives the same bound', async () => {
    expect((await anvil.request('/flood/run/again')).status).toBe(200);
    expect(await settledCount('again')).toBeLessThanOrEqual(1 + MAX_RUNNING_RUNS);
  });
});
