import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInstance, type Reply, type TestInstance } from '../helpers/instance.js';
import { waitFor } from '../helpers/wait-for.js';

// Issue 25: DatabaseBeginTransaction, DatabaseCommitTransaction, DatabaseRollback on the API's own
// SQLite database, over HTTP. One thread per API (--max-threads 1), so concurrent requests share
// the thread's database connection: the case where one request's transaction could swallow
// another's writes.
const API = `key: ledger
debug: true
endpoints:
  post /commit/{v}:
    Begin: { directive: DatabaseBeginTransaction }
    One: { directive: DatabaseQuery, mode: run, sql: "INSERT INTO rows (v) VALUES (?)", params: [$.message.pathParam.v] }
    Two: { directive: DatabaseQuery, mode: run, sql: "INSERT INTO rows (v) VALUES (? || '-2')", params: [$.message.pathParam.v] }
    Commit: { directive: DatabaseCommitTransaction }
    Reply: { directive: ModifyMessage, body: { committed: true } }
  post /throw/{v}:
    Begin: { directive: DatabaseBeginTransaction }
    Write: { directive: DatabaseQuery, mode: run, sql: "INSERT INTO rows (v) VALUES (?)", params: [$.message.pathParam.v] }
    Fail: { directive: ThrowError, status: 422, message: refused }
    Commit: { directive: DatabaseCommitTransaction }
    Audit: { directive: DatabaseQuery, mode: run, sql: "INSERT INTO audit (what) VALUES ('error ' || ?)", params: [$.message.pathParam.v], groups: [ERROR_FLOW] }
    OnError: { directive: OnError, groups: [ERROR_FLOW] }
  post /forget/{v}:
    Begin: { directive: DatabaseBeginTransaction }
    Write: { directive: DatabaseQuery, mode: run, sql: "INSERT INTO rows (v) VALUES (?)", params: [$.message.pathParam.v] }
    Reply: { directive: ModifyMessage, body: { forgot: true } }
  post /rollback/{v}:
    Begin: { directive: DatabaseBeginTransaction }
    Write: { directive: DatabaseQuery, mode: run, sql: "INSERT INTO rows (v) VALUES (?)", params: [$.message.pathParam.v] }
    Inside: { directive: DatabaseQuery, mode: get, sql: "SELECT count(*) AS n FROM rows WHERE v = ?", params: [$.message.pathParam.v], target: inside }
    Rollback: { directive: DatabaseRollback }
    Again: { directive: DatabaseRollback }
    After: { directive: DatabaseQuery, mode: get, sql: "SELECT count(*) AS n FROM rows WHERE v = ?", params: [$.message.pathParam.v], target: after }
    Reply: { directive: ModifyMessage, body: { inside: $.memory.inside.n, after: $.memory.after.n } }
  post /custom/{v}:
    Begin: { directive: DatabaseBeginTransaction }
    Write: { directive: WriteRow, v: $.message.pathParam.v }
    Fail: { directive: ThrowError, status: 409, message: custom refused }
  post /commit-alone:
    Commit: { directive: DatabaseCommitTransaction }
  post /twice:
    Begin: { directive: DatabaseBeginTransaction }
    Again: { directive: DatabaseBeginTransaction }
  post /slow/{v}:
    Started: { directive: DatabaseQuery, mode: run, sql: "INSERT INTO audit (what) VALUES ('started ' || ?)", params: [$.message.pathParam.v] }
    Begin: { directive: DatabaseBeginTransaction }
    Write: { directive: DatabaseQuery, mode: run, sql: "INSERT INTO rows (v) VALUES (?)", params: [$.message.pathParam.v] }
    Wait: { directive: Delay, ms: 800 }
    Enable: { directive: Groups, enable: [fail], if: $.message.query.fail }
    Fail: { directive: ThrowError, status: 409, message: changed my mind, groups: [fail] }
    Commit: { directive: DatabaseCommitTransaction }
    OnError: { directive: OnError, groups: [ERROR_FLOW] }
  post /plain/{v}:
    Write: { directive: DatabaseQuery, mode: run, sql: "INSERT INTO rows (v) VALUES (?)", params: [$.message.pathParam.v] }
    Reply: { directive: ModifyMessage, body: { written: true } }
  post /custom-plain/{v}:
    Write: { directive: WriteRow, v: $.message.pathParam.v }
  get /custom-count:
    Count: { directive: CountRows }
  get /started/{v}:
    Read: { directive: DatabaseQuery, mode: get, sql: "SELECT count(*) AS n FROM audit WHERE what = 'started ' || ?", params: [$.message.pathParam.v], target: row }
    Reply: { directive: ModifyMessage, body: $.memory.row }
  get /rows:
    Read: { directive: DatabaseQuery, sql: "SELECT v FROM rows ORDER BY v", target: rows }
    Reply: { directive: ModifyMessage, body: $.memory.rows }
  get /audit:
    Read: { directive: DatabaseQuery, sql: "SELECT what FROM audit ORDER BY what", target: rows }
    Reply: { directive: ModifyMessage, body: $.memory.rows }
`;

const FILES = {
  'api.yaml': API,
  'Assets/db/001.sql': 'CREATE TABLE rows (v TEXT NOT NULL);\nCREATE TABLE audit (what TEXT NOT NULL);\n',
  'Directives/WriteRow.js': `export default function (state, config) {
  state.db.run('INSERT INTO rows (v) VALUES (?)', [config.v]);
  state.message.body = { written: config.v };
}
`,
  'Directives/CountRows.js': `export default function (state) {
  state.message.body = state.db.get('SELECT count(*) AS n FROM rows');
}
`,
};

describe('database transactions', () => {
  let anvil: TestInstance;
  beforeAll(async () => {
    anvil = await startInstance({ apis: { ledger: FILES }, args: ['--max-threads', '1'] });
  });
  afterAll(async () => {
    await anvil?.dispose();
  });

  const post = (path: string) => anvil.request(`/ledger${path}`, { method: 'POST' });
  const values = async (): Promise<string[]> => {
    const reply = await anvil.request('/ledger/rows');
    expect(reply.status, reply.text).toBe(200);
    return (reply.json() as Array<{ v: string }>).map((row) => row.v);
  };

  it('commits every statement between Begin and Commit', async () => {
    const reply = await post('/commit/c1');
    expect(reply.status, reply.text).toBe(200);
    expect(reply.json()).toEqual({ committed: true });
    expect(await values()).toEqual(expect.arrayContaining(['c1', 'c1-2']));
  });

  it('rolls back the write of a transaction when a directive throws; ERROR_FLOW writes outside it', async () => {
    const reply = await post('/throw/t1');
    expect(reply.status).toBe(422);
    expect(reply.json()).toEqual({ error: 'refused' });
    expect(await values()).not.toContain('t1');
    const audit = (await anvil.request('/ledger/audit')).json() as Array<{ what: string }>;
    expect(audit.map((row) => row.what)).toContain('error t1');
  });

  it('rolls back a transaction still open when the flow ends', async () => {
    const reply = await post('/forget/f1');
    expect(reply.status).toBe(200);
    expect(reply.json()).toEqual({ forgot: true });
    expect(await values()).not.toContain('f1');
  });

  it('DatabaseRollback undoes the transaction; a second one, with none open, does nothing', async () => {
    const reply = await post('/rollback/r1');
    expect(reply.status, reply.text).toBe(200);
    expect(reply.json()).toEqual({ inside: 1, after: 0 });
    expect(await values()).not.toContain('r1');
  });

  it("a custom directive's state.db writes inside the request's transaction", async () => {
    const reply = await post('/custom/k1');
    expect(reply.status).toBe(409);
    expect(await values()).not.toContain('k1');
  });

  it('Commit without a transaction, and a Begin inside a transaction, are errors of the API', async () => {
    const alone = await post('/commit-alone');
    expect(alone.status).toBe(500);
    expect(alone.json().error).toBe(
      'DatabaseCommitTransaction: this request has no transaction open (never begun, already committed, or rolled back when a directive failed or its pass ended)',
    );
    const twice = await post('/twice');
    expect(twice.status).toBe(500);
    expect(twice.json().error).toBe('DatabaseBeginTransaction: this request already has a transaction open (transactions do not nest)');
    // The first Begin of /twice was rolled back: a new transaction can begin at once.
    expect((await post('/commit/c2')).status).toBe(200);
  });

  /**
   * Starts /slow/<v> (a transaction that stays open ~800 ms) and waits until its transaction is open
   * (the row it writes just before Begin is there: Begin and its write follow at once, on the thread).
   */
  async function slowTransaction(v: string, fail: boolean): Promise<{ reply: Promise<Reply> }> {
    const reply = post(`/slow/${v}${fail ? '?fail=1' : ''}`);
    await waitFor(async () => (await anvil.request(`/ledger/started/${v}`)).json().n === 1, { what: `the transaction of /slow/${v} to be open` });
    return { reply };
  }

  it("another request's write on the same thread is not swallowed by a transaction that rolls back", async () => {
    const slow = await slowTransaction('s1', true);
    // Waits for the transaction to end, then writes on its own.
    const plain = await post('/plain/p1');
    expect(plain.status, plain.text).toBe(200);
    expect((await slow.reply).status).toBe(409);
    const after = await values();
    expect(after).toContain('p1');
    expect(after).not.toContain('s1');
  });

  it('reads of other requests go on during a transaction and see only what was committed', async () => {
    const before = (await anvil.request('/ledger/custom-count')).json().n as number;
    const slow = await slowTransaction('s2', false);
    const during = await anvil.request('/ledger/custom-count');
    expect(during.status, during.text).toBe(200);
    expect(during.json().n).toBe(before);
    expect((await slow.reply).status).toBe(200);
    expect((await anvil.request('/ledger/custom-count')).json().n).toBe(before + 1);
  });

  it("a custom directive's write during another request's transaction is refused with 503, never blocks the thread", async () => {
    const slow = await slowTransaction('s3', false);
    const refused = await post('/custom-plain/k2');
    expect(refused.status, refused.text).toBe(503);
    expect(refused.json().error).toBe(
      "the API's database is held by another request's transaction on this thread: a write cannot wait for it here (a custom directive's state.db); retry",
    );
    expect((await slow.reply).status).toBe(200);
    const after = await values();
    expect(after).toContain('s3');
    expect(after).not.toContain('k2');
  });

  it('two transactions on one thread take turns, and both commit', async () => {
    const slow = await slowTransaction('s4', false);
    const second = await post('/commit/c3');
    expect(second.status, second.text).toBe(200);
    expect((await slow.reply).status).toBe(200);
    expect(await values()).toEqual(expect.arrayContaining(['s4', 'c3', 'c3-2']));
  });
});
