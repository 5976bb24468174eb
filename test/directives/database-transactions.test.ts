import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Reply } from '../helpers/instance.js';
import { startInProcess, type InProcessApis } from '../helpers/in-process-apis.js';
import { waitFor } from '../helpers/wait-for.js';

// Issue 25: DatabaseBeginTransaction, DatabaseCommitTransaction, DatabaseRollback on the API's own
// SQLite database, over HTTP. One thread per API (--max-threads 1), so concurrent requests share
// the thread's database connection: the case where one request's transaction could swallow
// another's writes. A transaction is kept open by a Pull to a local upstream that answers when the
// test says so.
const api = (gatePort: number) => `key: ledger
debug: true
limits: { cpuMs: 1000 }
endpoints:
  post /commit/{v}:
    Announce: { directive: Pull, host: "http://127.0.0.1:${gatePort}", path: /arrive, queryParams: { v: $.message.pathParam.v }, target: arrived }
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
    Begin: { directive: DatabaseBeginTransaction }
    Write: { directive: DatabaseQuery, mode: run, sql: "INSERT INTO rows (v) VALUES (?)", params: [$.message.pathParam.v] }
    Wait: { directive: Pull, host: "http://127.0.0.1:${gatePort}", path: /hold, queryParams: { v: $.message.pathParam.v }, target: held, timeout: 30 }
    Enable: { directive: Groups, enable: [fail], if: $.message.query.fail }
    Fail: { directive: ThrowError, status: 409, message: changed my mind, groups: [fail] }
    Commit: { directive: DatabaseCommitTransaction }
    OnError: { directive: OnError, groups: [ERROR_FLOW] }
  post /plain/{v}:
    Announce: { directive: Pull, host: "http://127.0.0.1:${gatePort}", path: /arrive, queryParams: { v: $.message.pathParam.v }, target: arrived }
    Write: { directive: DatabaseQuery, mode: run, sql: "INSERT INTO rows (v) VALUES (?)", params: [$.message.pathParam.v] }
    Reply: { directive: ModifyMessage, body: { written: true } }
  post /custom-plain/{v}:
    Write: { directive: WriteRow, v: $.message.pathParam.v }
  get /custom-count:
    Count: { directive: CountRows }
  get /rows:
    Read: { directive: DatabaseQuery, sql: "SELECT v FROM rows ORDER BY v", target: rows }
    Reply: { directive: ModifyMessage, body: $.memory.rows }
  get /audit:
    Read: { directive: DatabaseQuery, sql: "SELECT what FROM audit ORDER BY what", target: rows }
    Reply: { directive: ModifyMessage, body: $.memory.rows }
`;

const files = (gatePort: number) => ({
  'api.yaml': api(gatePort),
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
});

/**
 * An upstream whose `/hold?v=<v>` answers only once the test releases `v` (a transaction that waits
 * on it stays open until then), and whose `/arrive?v=<v>` answers at once: the request is about to
 * run its next entry. The test sees both here, whatever the API's thread is doing.
 */
interface Gate {
  port: number;
  arrived(v: string): boolean;
  release(v: string): void;
  close(): Promise<void>;
}

async function startGate(): Promise<Gate> {
  const waiting = new Map<string, ServerResponse>();
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://gate');
    const v = url.searchParams.get('v') ?? '';
    waiting.set(v, res);
    if (url.pathname === '/arrive') res.writeHead(200, { 'content-type': 'application/json' }).end('{"arrived":true}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    arrived: (v) => waiting.has(v),
    release: (v) => waiting.get(v)?.writeHead(200, { 'content-type': 'application/json' }).end('{"released":true}'),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

describe('database transactions', () => {
  let anvil: InProcessApis;
  let gate: Gate;
  beforeAll(async () => {
    gate = await startGate();
    // One actor, as with --max-threads 1 on an instance: the requests below share its database connection.
    anvil = await startInProcess({ apis: { ledger: files(gate.port) }, env: { ANVIL_EGRESS_ALLOW: '127.0.0.1' } });
  });
  afterAll(async () => {
    await anvil?.dispose();
    await gate?.close();
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
    expect(twice.json().error).toBe(
      'DatabaseBeginTransaction: this request already has a transaction open (transactions do not nest)',
    );
    // The first Begin of /twice was rolled back: a new transaction can begin at once.
    expect((await post('/commit/c2')).status).toBe(200);
  });

  /** Starts /slow/<v> and waits until its transaction is open, its write made, and it waits for the gate. */
  async function openTransaction(v: string, fail = false): Promise<{ reply: Promise<Reply> }> {
    const reply = post(`/slow/${v}${fail ? '?fail=1' : ''}`);
    await waitFor(() => gate.arrived(v), { what: `the transaction of /slow/${v} to be open` });
    return { reply };
  }

  /** Waits until the request for `v` has run its Announce entry: its next entry (a write, a Begin) runs at once. */
  const announced = (v: string) => waitFor(() => gate.arrived(v), { what: `the request for ${v} to reach its write` });

  it("another request's write on the same thread waits for a transaction, and is not rolled back with it", async () => {
    const open = await openTransaction('s1', true);
    const plain = post('/plain/p1');
    await announced('p1');
    gate.release('s1');
    expect((await open.reply).status).toBe(409);
    const written = await plain;
    expect(written.status, written.text).toBe(200);
    const after = await values();
    expect(after).toContain('p1');
    expect(after).not.toContain('s1');
  });

  it('reads of other requests go on during a transaction and see only what was committed', async () => {
    const before = (await anvil.request('/ledger/custom-count')).json().n as number;
    const open = await openTransaction('s2');
    const during = await anvil.request('/ledger/custom-count');
    expect(during.status, during.text).toBe(200);
    expect(during.json().n).toBe(before);
    gate.release('s2');
    expect((await open.reply).status).toBe(200);
    expect((await anvil.request('/ledger/custom-count')).json().n).toBe(before + 1);
  });

  it("a custom directive's write during another request's transaction is refused with 503, never blocks the thread", async () => {
    const open = await openTransaction('s3');
    const refused = await post('/custom-plain/k2');
    expect(refused.status, refused.text).toBe(503);
    expect(refused.json().error).toBe(
      "the API's database is held by another request's transaction on this thread: a write cannot wait for it here (a custom directive's state.db); retry",
    );
    gate.release('s3');
    expect((await open.reply).status).toBe(200);
    const after = await values();
    expect(after).toContain('s3');
    expect(after).not.toContain('k2');
  });

  it('two transactions on one thread take turns, and both commit', async () => {
    const open = await openTransaction('s4');
    const second = post('/commit/c3');
    await announced('c3');
    gate.release('s4');
    expect((await open.reply).status).toBe(200);
    const committed = await second;
    expect(committed.status, committed.text).toBe(200);
    expect(await values()).toEqual(expect.arrayContaining(['s4', 'c3', 'c3-2']));
  });
});
