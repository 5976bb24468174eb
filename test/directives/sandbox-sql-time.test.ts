import { afterAll, beforeAll, expect, it } from 'vitest';
import { startInProcess, type InProcessApis } from '../helpers/in-process-apis.js';

// Issue 41, case 3: the SQL a custom directive runs through state.db is native code on the actor
// thread; isolated-vm counts none of it to the isolate and its timeout does not stop it. The host
// times it and counts it to the call's CPU (and wall) time: a call whose SQL ran past its budget
// fails with the sandbox's CPU (500) or wall (504) error, and its later state.db calls are refused.
// In-process (helpers/in-process-apis.ts): the actor's sandbox and database, as a thread runs them.

/** ~0.5 µs a row here: a million rows are hundreds of milliseconds of SQLite's own CPU. */
const SLOW =
  'with recursive c(x) as (select 1 union all select x + 1 from c limit 1000000) select count(*) as n from c';

const api = (key: string, limits: string) => ({
  'api.yaml': `key: ${key}
debug: true
limits: { ${limits} }
before:
  Connect: { directive: DatabaseConnect }
endpoints:
  get /slow:
    Slow: { directive: SlowSql }
  get /many:
    Many: { directive: ManySql }
  get /ticks:
    Count: { directive: DatabaseQuery, sql: "select count(*) as n from ticks", target: count, mode: get }
    Reply: { directive: ModifyMessage, body: $.memory.count }
  get /quick:
    Quick: { directive: QuickSql }
`,
  'Assets/db/001.sql': 'CREATE TABLE ticks (n INTEGER);\n',
  'Directives/SlowSql.js': `export default (state) => {
  state.message.body = state.db.get(${JSON.stringify(SLOW)});
};
`,
  // Ten slow inserts, each failure caught: only the refusals of the host can keep the rows few.
  'Directives/ManySql.js': `export default (state) => {
  let refused = 0;
  for (let i = 0; i < 10; i++) {
    try {
      state.db.run(${JSON.stringify(`insert into ticks (n) ${SLOW}`)});
    } catch {
      refused++;
    }
  }
  state.message.body = { refused };
};
`,
  'Directives/QuickSql.js': `export default (state) => {
  state.message.body = state.db.get('select 1 as one');
};
`,
});

let anvil: InProcessApis;

beforeAll(async () => {
  anvil = await startInProcess({
    apis: {
      frugal: api('frugal', 'cpuMs: 50, wallMs: 60000'),
      hasty: api('hasty', 'cpuMs: 60000, wallMs: 100'),
    },
  });
}, 60_000);
afterAll(async () => anvil?.dispose());

it("counts a state.db query's SQLite time to the call's CPU time: past it, the CPU limit's 500", async () => {
  const reply = await anvil.request('/frugal/slow');
  expect(reply.status).toBe(500);
  expect(reply.json().error).toBe('SlowSql used more than its 50 ms of CPU time');
  // The next call gets a fresh sandbox.
  const next = await anvil.request('/frugal/quick');
  expect(next.status).toBe(200);
  expect(next.json()).toEqual({ one: 1 });
}, 60_000);

it('refuses the later state.db calls of a call past its CPU time, even those it catches', async () => {
  const reply = await anvil.request('/frugal/many');
  expect(reply.status).toBe(500);
  expect(reply.json().error).toBe('ManySql used more than its 50 ms of CPU time');
  // The first insert (hundreds of ms) took the call past its 50 ms: the nine after it were refused.
  expect((await anvil.request('/frugal/ticks')).json()).toEqual({ n: 1 });
}, 60_000);

it("counts it to the call's wall time too: past it, the wall limit's 504", async () => {
  const reply = await anvil.request('/hasty/slow');
  expect(reply.status).toBe(504);
  expect(reply.json().error).toBe('SlowSql ran longer than its 100 ms');
  expect((await anvil.request('/hasty/quick')).status).toBe(200);
}, 60_000);
