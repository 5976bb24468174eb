import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcess, type InProcessApis } from '../helpers/in-process-apis.js';
import { pingApi } from '../helpers/instance.js';

// Issue 42: one request from outside causes at most --max-bus-calls (1 000) bus calls in all. An
// endpoint with six LocalCalls to itself (api.yaml only, built-ins) is cut short by hops in depth
// (8) but not in width: one request used to become ~31 000 requests and 194 000 bus calls.
// In-process (helpers/in-process-apis.ts): the engines' calls to each other, the budget a request
// from outside starts with (the instance's default --max-bus-calls) the harness's.

const MAX_BUS_CALLS = 1_000;

const countTable = 'CREATE TABLE IF NOT EXISTS hits (n INTEGER)';

let anvil: InProcessApis;

beforeAll(async () => {
  anvil = await startInProcess({
    apis: {
      fan: {
        'api.yaml': `key: fan
endpoints:
  get /x:
    Table: { directive: DatabaseQuery, sql: "${countTable}", mode: run }
    Count: { directive: DatabaseQuery, sql: "INSERT INTO hits (n) VALUES (1)", mode: run }
    C1: { directive: LocalCall, path: /fan/x }
    C2: { directive: LocalCall, path: /fan/x }
    C3: { directive: LocalCall, path: /fan/x }
    C4: { directive: LocalCall, path: /fan/x }
    C5: { directive: LocalCall, path: /fan/x }
    C6: { directive: LocalCall, path: /fan/x }
  get /count:
    Table: { directive: DatabaseQuery, sql: "${countTable}", mode: run }
    Read: { directive: DatabaseQuery, sql: "SELECT COUNT(*) AS n FROM hits", target: rows }
    Reply: { directive: ModifyMessage, body: $.memory.rows }
  get /three:
    C1: { directive: LocalCall, path: /leaf/one }
    C2: { directive: LocalCall, path: /leaf/one }
    C3: { directive: LocalCall, path: /leaf/one }
`,
      },
      leaf: {
        'api.yaml':
          'key: leaf\nendpoints:\n  get /one:\n    Reply: { directive: ModifyMessage, body: { leaf: true } }\n',
      },
      neighbour: pingApi('neighbour'),
    },
  });
});
afterAll(async () => anvil?.dispose());

async function requestsServed(): Promise<number> {
  const reply = await anvil.request('/fan/count');
  expect(reply.status).toBe(200);
  return (reply.json() as Array<{ n: number }>)[0]!.n;
}

/** The calls fan made over the bus (anvil_bus_calls_total of the APIs here: only fan calls). */
function busCalls(): number {
  return anvil.busCalls('fan');
}

describe('the bus calls one request may cause', () => {
  it('an endpoint with six LocalCalls to itself: at most 1 000 calls in all, those over it refused with ANVIL_ERR_QUOTA_BUS_CALLS (508), a neighbour unaffected', async () => {
    expect((await anvil.request('/neighbour/ping')).status).toBe(200);
    const callsBefore = busCalls();
    const root = anvil.request('/fan/x');
    // A neighbour API answers while the tree of calls runs.
    for (let i = 0; i < 20; i++) expect((await anvil.request('/neighbour/ping')).status).toBe(200);
    const reply = await root;
    const served = await requestsServed();
    // The root request and one per bus call that reached the API.
    expect(served).toBeGreaterThan(1);
    expect(served - 1).toBeLessThanOrEqual(MAX_BUS_CALLS);
    // Every call counted, the ones the hop limit refused included.
    const calls = busCalls() - callsBefore;
    expect(calls).toBeGreaterThanOrEqual(served - 1);
    expect(calls).toBeLessThanOrEqual(MAX_BUS_CALLS);
    // The root answers with its last LocalCall's answer: the refusal of a call deeper down, an
    // error of the flow there (rendered as any, its message shown: it is a quota's), counted.
    expect(reply.status).toBe(508);
    expect(reply.json()).toEqual({
      error: expect.stringContaining('one request from outside may cause at most --max-bus-calls calls between APIs'),
    });
    expect(anvil.quotaRefusals('fan', 'bus_calls')).toBeGreaterThan(0);
    expect((await anvil.request('/neighbour/ping')).status).toBe(200);
  });

  it('a request within the budget makes its calls as before', async () => {
    const reply = await anvil.request('/fan/three');
    expect(reply.status).toBe(200);
    expect(reply.json()).toEqual({ leaf: true });
  });
});
