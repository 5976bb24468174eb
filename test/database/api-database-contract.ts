import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiFiles, TestInstance } from '../helpers/instance.js';

/**
 * What an API's database does, whichever mode api.yaml chose (`database: sqlite`, the default, or
 * `database: postgres`): the same API folder, its migration written for the engine, through
 * DatabaseQuery and a custom directive's `state.db`, over HTTP. Both the SQLite and the PostgreSQL
 * test files call it (in the manner of test/stores/kv-contract.ts).
 *
 * `start` starts an instance serving the given API folders (`contractApis(mode)`) and returns it
 * with its cleanup; or returns an instance shared with other tests that serves them already.
 */
export type DatabaseMode = 'sqlite' | 'postgres';

/** The migration of the `notes` table in each engine's dialect (the rest of the API is the same). */
const NOTES_TABLE: Record<DatabaseMode, string> = {
  sqlite: 'create table notes (id integer primary key autoincrement, title text not null unique, n integer);\n',
  postgres: 'create table notes (id serial primary key, title text not null unique, n integer);\n',
};

export function notesApi(mode: DatabaseMode, key = 'notes'): ApiFiles {
  return {
    'api.yaml': `key: ${key}
debug: true
${mode === 'postgres' ? 'database: postgres\n' : ''}endpoints:
  post /notes:
    Insert: { directive: DatabaseQuery, sql: "insert into notes (title, n) values (?, ?) returning id", params: [$.message.body.title, $.message.body.n], mode: get, target: row }
    Reply: { directive: ModifyMessage, body: $.memory.row }
  get /notes/{id}:
    Read: { directive: DatabaseQuery, sql: "select id, title, n from notes where id = ?", params: [$.message.pathParam.id], mode: get, target: row }
    Reply: { directive: ModifyMessage, body: $.memory.row }
  get /notes:
    All: { directive: DatabaseQuery, sql: "select id, title, n from notes order by id", target: rows }
    Reply: { directive: ModifyMessage, body: $.memory.rows }
  post /count:
    Count: { directive: DatabaseQuery, sql: "select count(*) as c from notes where n >= ? and title <> '?'", params: [$.message.body.min], mode: get, target: row }
    Reply: { directive: ModifyMessage, body: $.memory.row }
  post /named:
    Count: { directive: DatabaseQuery, sql: "select count(*) as c from notes where n >= :min", params: { min: $.message.body.min }, mode: get, target: row }
    Reply: { directive: ModifyMessage, body: $.memory.row }
  post /sql:
    Run: { directive: DatabaseQuery, sql: $.message.body.sql, params: $.message.body.params, mode: all, target: rows }
    Reply: { directive: ModifyMessage, body: $.memory.rows }
  post /custom:
    Add: { directive: AddNote }
  post /custom-sql:
    Run: { directive: RunSql }
  get /custom/{id}:
    Read: { directive: ReadNote }
  post /tx/{outcome}:
    Begin: { directive: DatabaseBeginTransaction }
    Insert: { directive: DatabaseQuery, sql: "insert into notes (title, n) values (?, 0)", params: [$.message.body.title], mode: run }
    AddInside: { directive: AddNote }
    Commit: { directive: ExecuteIf, if: $.message.body.commit, execute: DatabaseCommitTransaction }
    Fail: { directive: ExecuteIf, if: $.message.body.fail, execute: ThrowError, status: 409, message: rolled back }
    Reply: { directive: ModifyMessage, body: { done: true } }
`,
    'Assets/db/001-notes.sql': NOTES_TABLE[mode],
    'Assets/db/002-seed.sql': "insert into notes (title, n) values ('seed', 0);\n",
    'Directives/AddNote.js': `export default function AddNote(state) {
  const body = state.message.body;
  const title = body.inside ? body.inside : body.title;
  const run = state.db.run('insert into notes (title, n) values (?, ?) returning id', [title, body.n ?? 0]);
  const row = state.db.get('select id, title, n from notes where title = ?', [title]);
  if (!body.inside) state.message.body = { changes: run.changes, row };
}
`,
    'Directives/RunSql.js': `export default function RunSql(state) {
  const { sql, params } = state.message.body;
  state.message.body = state.db.all(sql, params ?? []);
}
`,
    'Directives/ReadNote.js': `export default function ReadNote(state) {
  const row = state.db.get('select id, title, n from notes where id = ?', [Number(state.message.pathParams.id)]);
  if (!row) state.fail(404, 'no such note');
  state.message.body = { row, all: state.db.all('select title from notes order by id', []).map((r) => r.title) };
}
`,
  };
}

const json = { 'content-type': 'application/json' };

/** The API folders the contract's tests call, by name. */
export function contractApis(mode: DatabaseMode): Record<string, ApiFiles> {
  return { notes: notesApi(mode) };
}

export function apiDatabaseContract(
  mode: DatabaseMode,
  start: (apis: Record<string, ApiFiles>) => Promise<{ instance: TestInstance; cleanup(): Promise<void> }>,
): void {
  describe(`the API's database (${mode})`, () => {
    let instance: TestInstance;
    let cleanup: () => Promise<void>;
    const post = (path: string, body: unknown) =>
      instance.request(path, { method: 'POST', headers: json, body: JSON.stringify(body) });

    beforeAll(async () => {
      ({ instance, cleanup } = await start(contractApis(mode)));
    }, 60_000);
    afterAll(async () => {
      await cleanup?.();
    });

    it('applies the migrations, then writes and reads rows through DatabaseQuery', async () => {
      const created = await post('/notes/notes', { title: 'first', n: 5 });
      expect(created.status).toBe(200);
      const id = created.json().id;
      expect(typeof id).toBe('number');
      const read = await instance.request(`/notes/notes/${id}`);
      expect(read.json()).toEqual({ id, title: 'first', n: 5 });
      const all = (await instance.request('/notes/notes')).json();
      expect(all.map((r: { title: string }) => r.title)).toEqual(['seed', 'first']);
    });

    it('binds ? parameters in order, never inside a string literal, and :name from a map', async () => {
      await post('/notes/notes', { title: 'second', n: 7 });
      expect((await post('/notes/count', { min: 6 })).json()).toEqual({ c: 1 });
      expect((await post('/notes/count', { min: 0 })).json().c).toBeGreaterThanOrEqual(3);
      expect((await post('/notes/named', { min: 6 })).json()).toEqual({ c: 1 });
      // A value that looks like SQL stays a value.
      const sneaky = await post('/notes/sql', {
        sql: 'select count(*) as c from notes where title = ?',
        params: ["x' or '1'='1"],
      });
      expect(sneaky.json()).toEqual([{ c: 0 }]);
    });

    it("writes and reads through a custom directive's state.db", async () => {
      const added = await post('/notes/custom', { title: 'custom', n: 3 });
      expect(added.status).toBe(200);
      const { changes, row } = added.json();
      expect(changes).toBe(1);
      expect(row).toMatchObject({ title: 'custom', n: 3 });
      const read = await instance.request(`/notes/custom/${row.id}`);
      expect(read.status).toBe(200);
      expect(read.json().row).toEqual(row);
      expect(read.json().all).toContain('custom');
      expect((await instance.request('/notes/custom/99999')).status).toBe(404);
    });

    it('answers 409 for a constraint violation and refuses several statements in one string', async () => {
      await post('/notes/notes', { title: 'unique', n: 1 });
      const again = await post('/notes/notes', { title: 'unique', n: 1 });
      expect(again.status).toBe(409);
      const two = await post('/notes/sql', { sql: 'select 1 as a; select 2 as b' });
      expect(two.status).toBe(500);
      expect(two.json().error).toMatch(/SQL refused: more than one statement/);
    });

    it('commits a transaction, and rolls it back (state.db writes in it included) when a directive fails', async () => {
      const committed = await post('/notes/tx/commit', { title: 'tx-kept', inside: 'tx-kept-2', commit: true });
      expect(committed.status).toBe(200);
      const failed = await post('/notes/tx/fail', { title: 'tx-lost', inside: 'tx-lost-2', fail: true });
      expect(failed.status).toBe(409);
      const titles = (await instance.request('/notes/notes')).json().map((r: { title: string }) => r.title);
      expect(titles).toEqual(expect.arrayContaining(['tx-kept', 'tx-kept-2']));
      expect(titles).not.toContain('tx-lost');
      expect(titles).not.toContain('tx-lost-2');
    });
  });
}
