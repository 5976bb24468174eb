import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cellOf, cellPid, settledTaskCount } from '../helpers/cells.js';
import { eventually, startInstance, type ApiFiles, type TestInstance } from '../helpers/instance.js';
import { waitFor } from '../helpers/wait-for.js';

// SPEC §2 (Assets/db, Assets/sql) and §7 (DatabaseConnect, DatabaseQuery), against real SQLite
// files of real instances.

const USERS_API = `key: users
endpoints:
  get /connect:
    Connect: { directive: DatabaseConnect }
    Reply: { directive: ModifyMessage, body: { connected: true } }
  get /users:
    List: { directive: DatabaseQuery, sql: "SELECT id, name, email FROM users ORDER BY id", target: users }
    Reply: { directive: ModifyMessage, body: $.memory.users }
  get /users/{id}:
    Read: { directive: DatabaseQuery, mode: get, sql: "SELECT id, name FROM users WHERE id = ?", params: [$.message.pathParam.id], target: user }
    Reply: { directive: ModifyMessage, body: { user: $.memory.user } }
  get /search:
    Find:
      directive: DatabaseQuery
      sql: "SELECT id, name FROM users WHERE name = :name ORDER BY id"
      params: { name: $.message.query.name }
      target: found
    Reply: { directive: ModifyMessage, body: { found: $.memory.found } }
  post /users:
    Insert:
      directive: DatabaseQuery
      mode: run
      sql: "INSERT INTO users (name, email) VALUES (@name, $email)"
      params: { name: $.message.body.name, email: $.message.body.email }
      target: inserted
    Reply: { directive: ModifyMessage, status: 201, body: $.memory.inserted }
  delete /users/{id}:
    Delete: { directive: DatabaseQuery, mode: run, sql: "DELETE FROM users WHERE id = ?", params: [$.message.pathParam.id] }
    Reply: { directive: ModifyMessage, status: 204 }
  get /nested/{id}:
    User: { directive: DatabaseQuery, mode: get, sql: "SELECT name FROM users WHERE id = ?", params: [$.message.pathParam.id], target: out.user }
    Count: { directive: DatabaseQuery, mode: get, sql: "SELECT count(*) AS n FROM users", target: out.count }
    Reply: { directive: ModifyMessage, body: $.memory.out }
  get /types:
    Types:
      directive: DatabaseQuery
      mode: get
      sql: "SELECT 9007199254740993 AS big, -42 AS small, 1.5 AS real, x'00ff10' AS blob, NULL AS nada, 'text' AS text, 7 AS __proto__"
      target: types
    Reply: { directive: ModifyMessage, body: $.memory.types }
  post /sql:
    Run: { directive: DatabaseQuery, sql: $.message.body.sql, params: $.message.body.params, mode: $.message.body.mode, target: result }
    Reply: { directive: ModifyMessage, body: { result: $.memory.result } }
`;

const USERS_FILES: ApiFiles = {
  'api.yaml': USERS_API,
  'Assets/db/001-users.sql': `-- The users; a comment with a ; in it
CREATE TABLE users (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  email TEXT UNIQUE
);
CREATE INDEX users_name ON users (name);
`,
  'Assets/db/002-seed.sql': `INSERT INTO users (name, email) VALUES ('ada', 'ada@example.com');
INSERT INTO users (name, email) VALUES ('grace', 'grace@example.com'), ('it''s; me', NULL);
`,
  // Assets/db exists, so Assets/sql is not read.
  'Assets/sql/000-ignored.sql': 'CREATE TABLE ignored (x);\n',
};

const BROKEN_002 = `CREATE TABLE b (x);
INSERT INTO a VALUES (2);
INSERT INTO nosuch VALUES (1);
`;
const brokenFiles = (second: string): ApiFiles => ({
  'api.yaml': `key: broken
endpoints:
  get /a:
    Connect: { directive: DatabaseConnect }
    List: { directive: DatabaseQuery, sql: "SELECT x FROM a ORDER BY x", target: rows }
    Reply: { directive: ModifyMessage, body: $.memory.rows }
`,
  'Assets/db/001-ok.sql': 'CREATE TABLE a (x);\nINSERT INTO a VALUES (1);\n',
  'Assets/db/002-bad.sql': second,
});

const LEGACY_FILES: ApiFiles = {
  'api.yaml': `key: legacy
endpoints:
  get /audit:
    List: { directive: DatabaseQuery, sql: "SELECT item_id, note FROM audit ORDER BY item_id", target: rows }
    Reply: { directive: ModifyMessage, body: $.memory.rows }
`,
  'Assets/sql/001-init.sql': `CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL, created TEXT);
CREATE TABLE audit (item_id INTEGER, note TEXT);
CREATE TRIGGER items_ai AFTER INSERT ON items BEGIN
  INSERT INTO audit (item_id, note) VALUES (new.id, 'added; by trigger');
  UPDATE items SET created = 'seed' WHERE id = new.id;
END;
/* two items */ INSERT INTO items (name) VALUES ('one'), ('two');
`,
};

const OTHER_FILES: ApiFiles = {
  'api.yaml': `key: other
endpoints:
  get /connect:
    Connect: { directive: DatabaseConnect }
    Reply: { directive: ModifyMessage, body: { connected: true } }
`,
  'Assets/db/001-secret.sql': "CREATE TABLE secrets (s TEXT);\nINSERT INTO secrets VALUES ('of the other API');\n",
};

const dataDir = mkdtempSync(join(tmpdir(), 'anvil-data-'));
const apiDb = (key: string) => join(dataDir, 'localhost', 'dev', key, 'db.sqlite');
const otherDb = apiDb('other');
const sneakyFiles: ApiFiles = {
  'api.yaml': `key: sneaky
endpoints:
  get /connect:
    Connect: { directive: DatabaseConnect }
`,
  'Assets/db/001-attach.sql': `CREATE TABLE t (x);\nATTACH DATABASE '${otherDb}' AS o;\nINSERT INTO t SELECT * FROM o.secrets;\n`,
};

let anvil: TestInstance;

beforeAll(async () => {
  anvil = await startInstance({
    dataDir,
    apis: {
      users: USERS_FILES,
      broken: brokenFiles(BROKEN_002),
      legacy: LEGACY_FILES,
      other: OTHER_FILES,
      sneaky: sneakyFiles,
    },
  });
});
afterAll(async () => anvil?.dispose());

/** Reads an API's database from the test process (read-only), then closes it. */
function inspect<T>(key: string, read: (db: Database.Database) => T): T {
  const db = new Database(apiDb(key), { readonly: true, fileMustExist: true });
  try {
    return read(db);
  } finally {
    db.close();
  }
}

const migrations = (key: string) =>
  inspect(
    key,
    (db) =>
      db.prepare('SELECT name, applied_at FROM _anvil_migrations ORDER BY rowid').all() as Array<{
        name: string;
        applied_at: string;
      }>,
  );
const tables = (key: string) =>
  inspect(
    key,
    (db) => db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name").pluck().all() as string[],
  );

function sql(body: Record<string, unknown>) {
  return anvil.request('/users/sql', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

/** The instance logged this request's directive error with exactly this message. */
async function loggedError(correlationId: unknown, message: string): Promise<void> {
  await eventually(() => anvil.logLines().some((l) => l.requestId === correlationId && l.message === message));
}

async function refused(body: Record<string, unknown>, message: string): Promise<void> {
  const reply = await sql(body);
  expect(reply.status).toBe(500);
  expect(reply.json()).toEqual({ error: 'Internal Server Error' });
  await loggedError(reply.headers['x-correlation-id'], message);
}

describe('migrations (Assets/db, Assets/sql)', () => {
  it('DatabaseConnect opens <data>/<host>/<env>/<key>/db.sqlite in WAL mode and applies the migrations in order', async () => {
    expect(existsSync(apiDb('users'))).toBe(false);
    const reply = await anvil.request('/users/connect');
    expect(reply.status).toBe(200);
    expect(reply.json()).toEqual({ connected: true });
    expect(existsSync(apiDb('users'))).toBe(true);
    expect(existsSync(`${apiDb('users')}-wal`)).toBe(true);
    expect(inspect('users', (db) => db.pragma('journal_mode', { simple: true }))).toBe('wal');
    expect(migrations('users').map((m) => m.name)).toEqual(['001-users.sql', '002-seed.sql']);
    expect(tables('users')).not.toContain('ignored');
  });

  it('falls back to Assets/sql, keeping trigger bodies whole', async () => {
    const reply = await anvil.request('/legacy/audit');
    expect(reply.status).toBe(200);
    expect(reply.json()).toEqual([
      { item_id: 1, note: 'added; by trigger' },
      { item_id: 2, note: 'added; by trigger' },
    ]);
    expect(migrations('legacy').map((m) => m.name)).toEqual(['001-init.sql']);
  });

  it('a failing migration answers 500, is rolled back whole, and is tried again by the next request', async () => {
    for (let attempt = 0; attempt < 2; attempt++) {
      const reply = await anvil.request('/broken/a');
      expect(reply.status).toBe(500);
      expect(reply.json()).toEqual({ error: 'Internal Server Error' });
      await loggedError(
        reply.headers['x-correlation-id'],
        'migration Assets/db/002-bad.sql failed: no such table: nosuch',
      );
    }
    expect(migrations('broken').map((m) => m.name)).toEqual(['001-ok.sql']);
    expect(tables('broken')).toEqual(['_anvil_migrations', 'a']);
    expect(inspect('broken', (db) => db.prepare('SELECT x FROM a').pluck().all())).toEqual([1]);
  });

  it("a migration that ATTACHes another API's database is refused and rolled back; the file is never opened", async () => {
    const reply = await anvil.request('/sneaky/connect');
    expect(reply.status).toBe(500);
    await loggedError(
      reply.headers['x-correlation-id'],
      'migration Assets/db/001-attach.sql failed: SQL refused: ATTACH is not allowed',
    );
    expect(tables('sneaky')).toEqual(['_anvil_migrations']);
    expect(migrations('sneaky')).toEqual([]);
    expect(existsSync(otherDb)).toBe(false);
  });
});

describe('DatabaseQuery', () => {
  it('mode all (the default) without DatabaseConnect first: the rows, as JSON', async () => {
    const reply = await anvil.request('/users/users');
    expect(reply.status).toBe(200);
    expect(reply.json()).toEqual([
      { id: 1, name: 'ada', email: 'ada@example.com' },
      { id: 2, name: 'grace', email: 'grace@example.com' },
      { id: 3, name: "it's; me", email: null },
    ]);
  });

  it('mode get with list params: the first row, or null', async () => {
    expect((await anvil.request('/users/users/2')).json()).toEqual({ user: { id: 2, name: 'grace' } });
    expect((await anvil.request('/users/users/99')).json()).toEqual({ user: null });
  });

  it('map params bind :name', async () => {
    expect((await anvil.request('/users/search?name=ada')).json()).toEqual({ found: [{ id: 1, name: 'ada' }] });
  });

  it('mode run with map params (@name, $name): {changes, lastInsertRowid}; and without a target', async () => {
    const created = await anvil.request('/users/users', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'linus', email: 'linus@example.com' }),
    });
    expect(created.status).toBe(201);
    expect(created.json()).toEqual({ changes: 1, lastInsertRowid: 4 });
    const deleted = await anvil.request('/users/users/4', { method: 'DELETE' });
    expect(deleted.status).toBe(204);
    expect((await anvil.request('/users/users/4')).json()).toEqual({ user: null });
  });

  it('a constraint violation is a 409', async () => {
    const reply = await anvil.request('/users/users', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'again', email: 'ada@example.com' }),
    });
    expect(reply.status).toBe(409);
    expect(reply.json()).toEqual({ error: 'SQL error: UNIQUE constraint failed: users.email' });
  });

  it('stores into a dotted target', async () => {
    expect((await anvil.request('/users/nested/1')).json()).toEqual({ user: { name: 'ada' }, count: { n: 3 } });
  });

  it('gives back plain JSON values: big integers as strings, blobs as base64, __proto__ as a plain key', async () => {
    const reply = await anvil.request('/users/types');
    const got = JSON.parse(reply.text) as Record<string, unknown>;
    expect(got).toMatchObject({
      big: '9007199254740993',
      small: -42,
      real: 1.5,
      blob: 'AP8Q',
      nada: null,
      text: 'text',
    });
    expect(Object.hasOwn(got, '__proto__')).toBe(true);
    expect(Object.getOwnPropertyDescriptor(got, '__proto__')?.value).toBe(7);
  });

  it('keeps an SQL injection attempt in a parameter as data', async () => {
    const attempts = ["ada' OR '1'='1", "x'; DROP TABLE users; --", 'ada" OR 1=1 --'];
    for (const name of attempts) {
      const reply = await anvil.request(`/users/search?name=${encodeURIComponent(name)}`);
      expect(reply.status).toBe(200);
      expect(reply.json()).toEqual({ found: [] });
    }
    expect((await anvil.request(`/users/users/${encodeURIComponent('1 OR 1=1')}`)).json()).toEqual({ user: null });
    expect((await anvil.request('/users/users')).json()).toHaveLength(3);
    // Stored as data, read back unchanged.
    const evil = "Robert'); DROP TABLE users;--";
    expect(
      (
        await sql({ sql: 'INSERT INTO users (name) VALUES (?) RETURNING id, name', params: [evil], mode: 'all' })
      ).json(),
    ).toEqual({
      result: [{ id: 4, name: evil }],
    });
    expect(tables('users')).toContain('users');
    expect((await sql({ sql: 'DELETE FROM users WHERE id = :id', params: { id: 4 }, mode: 'run' })).json()).toEqual({
      result: { changes: 1, lastInsertRowid: 4 },
    });
  });

  it('refuses mode all for a statement that returns no rows, and SQL errors are 500s', async () => {
    const reply = await sql({ sql: 'UPDATE users SET name = name WHERE id = 0', mode: 'all' });
    expect(reply.status).toBe(500);
    await loggedError(
      reply.headers['x-correlation-id'],
      'SQL error: mode all needs a statement that returns rows (SELECT, or … RETURNING); use run',
    );
    const missing = await sql({ sql: 'SELECT * FROM nowhere', mode: 'all' });
    expect(missing.status).toBe(500);
    await loggedError(missing.headers['x-correlation-id'], 'SQL error: no such table: nowhere');
  });

  it('names the columns as they are when the statement runs, after a change of schema', async () => {
    const run = async (statement: string, mode = 'run') => {
      const reply = await sql({ sql: statement, mode });
      expect(reply.status, statement).toBe(200);
      return reply.json().result;
    };
    await run('CREATE TABLE notes (a TEXT)');
    await run("INSERT INTO notes VALUES ('x')");
    expect(await run('SELECT * FROM notes', 'all')).toEqual([{ a: 'x' }]);
    expect(await run('SELECT * FROM notes', 'get')).toEqual({ a: 'x' });
    // A statement that names its columns keeps those names (they are read once); after the rename it
    // no longer compiles, rather than answer under a stale name.
    expect(await run('SELECT a, a AS again FROM notes', 'get')).toEqual({ a: 'x', again: 'x' });
    await run('ALTER TABLE notes RENAME COLUMN a TO z');
    await run('ALTER TABLE notes ADD COLUMN b INTEGER DEFAULT 2');
    expect(await run('SELECT * FROM notes', 'all')).toEqual([{ z: 'x', b: 2 }]);
    expect(await run('SELECT * FROM notes', 'get')).toEqual({ z: 'x', b: 2 });
    const stale = await sql({ sql: 'SELECT a, a AS again FROM notes', mode: 'get' });
    expect(stale.status).toBe(500);
    await run('DROP TABLE notes');
  });

  it('answers at most 10 000 rows', async () => {
    const count = (n: number) =>
      `WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < ${n}) SELECT i FROM c`;
    const ok = await sql({ sql: count(10_000), mode: 'all' });
    expect(ok.status).toBe(200);
    expect(ok.json().result).toHaveLength(10_000);
    const over = await sql({ sql: count(10_001), mode: 'all' });
    expect(over.status).toBe(500);
    await loggedError(
      over.headers['x-correlation-id'],
      'SQL result has more than 10000 rows (the limit of one query): add a LIMIT',
    );
  });
});

describe("a tenant's SQL reaches nothing but its own database", () => {
  it("ATTACH of another API's database file is refused, and that file is never created", async () => {
    expect(existsSync(otherDb)).toBe(false);
    await refused({ sql: `ATTACH DATABASE '${otherDb}' AS other`, mode: 'run' }, 'SQL refused: ATTACH is not allowed');
    await refused(
      { sql: `/* hello */ attach 'file:${otherDb}?mode=rwc' as other`, mode: 'run' },
      'SQL refused: ATTACH is not allowed',
    );
    await refused(
      { sql: `SELECT 1; ATTACH '${otherDb}' AS other`, mode: 'all' },
      'SQL refused: more than one statement in one string (found 2)',
    );
    expect(existsSync(otherDb)).toBe(false);
    expect(existsSync(`${otherDb}-wal`)).toBe(false);
    expect(existsSync(`${otherDb}-journal`)).toBe(false);
  });

  it('VACUUM INTO a path under /tmp is refused and writes nothing', async () => {
    const target = join(tmpdir(), `anvil-vacuum-${randomBytes(6).toString('hex')}.db`);
    await refused({ sql: `VACUUM INTO '${target}'`, mode: 'run' }, 'SQL refused: VACUUM is not allowed');
    await refused({ sql: `\n  vacuum main into '${target}'`, mode: 'run' }, 'SQL refused: VACUUM is not allowed');
    expect(existsSync(target)).toBe(false);
  });

  it('load_extension() is refused', async () => {
    await refused(
      { sql: "SELECT load_extension('/tmp/evil.so') AS x", mode: 'get' },
      'SQL refused: load_extension() is not allowed',
    );
  });

  it('pragma_database_list (it would reveal host paths) and PRAGMA are refused', async () => {
    const reply = await sql({ sql: 'SELECT * FROM pragma_database_list', mode: 'all' });
    expect(reply.status).toBe(500);
    expect(reply.text).not.toContain(dataDir);
    await loggedError(
      reply.headers['x-correlation-id'],
      'SQL refused: pragma_database_list is not allowed (table-valued pragma functions reveal the host)',
    );
    await refused(
      { sql: "SELECT file FROM 'pragma_database_list'", mode: 'all' },
      'SQL refused: pragma_database_list is not allowed (table-valued pragma functions reveal the host)',
    );
    await refused({ sql: 'PRAGMA database_list', mode: 'all' }, 'SQL refused: PRAGMA is not allowed');
    await refused({ sql: 'pragma trusted_schema = ON', mode: 'run' }, 'SQL refused: PRAGMA is not allowed');
  });

  it("the other API's database, once that API opened it, stays out of reach", async () => {
    expect((await anvil.request('/other/connect')).status).toBe(200);
    expect(inspect('other', (db) => db.prepare('SELECT s FROM secrets').pluck().all())).toEqual(['of the other API']);
    const reply = await sql({ sql: 'SELECT * FROM secrets', mode: 'all' });
    expect(reply.status).toBe(500);
    await loggedError(reply.headers['x-correlation-id'], 'SQL error: no such table: secrets');
    await refused({ sql: `ATTACH '${otherDb}' AS other`, mode: 'run' }, 'SQL refused: ATTACH is not allowed');
  });
});

describe('a restart on the same data dir', () => {
  it('applies no migration twice (the seed is not duplicated) and applies a fixed one', async () => {
    const before = migrations('users');
    const first = anvil;
    await first.stop();
    rmSync(first.apisDir, { recursive: true, force: true });
    anvil = await startInstance({
      dataDir,
      apis: {
        users: USERS_FILES,
        broken: brokenFiles('CREATE TABLE b (x);\nINSERT INTO a VALUES (2);\n'),
        legacy: LEGACY_FILES,
      },
    });
    const users = await anvil.request('/users/users');
    expect(users.status).toBe(200);
    expect(users.json().map((u: { name: string }) => u.name)).toEqual(['ada', 'grace', "it's; me"]);
    expect(migrations('users')).toEqual(before);
    expect(migrations('users').map((m) => m.name)).toEqual(['001-users.sql', '002-seed.sql']);

    // The fixed 002 (a new release) is applied; 001 is not run again.
    const fixed = await anvil.request('/broken/a');
    expect(fixed.status).toBe(200);
    expect(fixed.json()).toEqual([{ x: 1 }, { x: 2 }]);
    expect(migrations('broken').map((m) => m.name)).toEqual(['001-ok.sql', '002-bad.sql']);
    expect((await anvil.request('/legacy/audit')).json()).toHaveLength(2);
  });
});

describe('two threads of one API opening its database at once', () => {
  const RACE: ApiFiles = {
    'api.yaml': `key: race
endpoints:
  get /count:
    Count: { directive: DatabaseQuery, mode: get, sql: "SELECT count(*) AS n FROM hits", target: c }
    Reply: { directive: ModifyMessage, body: $.memory.c }
`,
    // Slow on purpose (a few hundred ms inside the migration's transaction).
    'Assets/db/001-slow.sql': `CREATE TABLE hits (n INTEGER);
WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 3000000) SELECT count(*) FROM c;
INSERT INTO hits VALUES (1), (2), (3);
`,
  };
  let race: TestInstance;
  afterAll(async () => race?.dispose());

  it('apply each migration once', async () => {
    // Threads of its own from the start (--shared-threads 0): two of them, racing.
    race = await startInstance({ apis: { race: RACE }, args: ['--cells', '1', '--shared-threads', '0'] });
    const tasks = () => readdirSync(`/proc/${cellPid(race.pid, cellOf('race', 1))}/task`).length;
    const baseline = await settledTaskCount(cellPid(race.pid, cellOf('race', 1)));
    // The first request opens the database and migrates (a few hundred ms, holding its thread); the
    // others come while it does: the actor starts a second thread, which opens the database meanwhile.
    const dbFile = join(race.dataDir, 'localhost', 'dev', 'race', 'db.sqlite');
    expect(existsSync(dbFile)).toBe(false);
    const first = race.request('/race/count');
    await waitFor(() => existsSync(dbFile), {
      what: 'the first request to create the race database (its migration begins)',
    });
    // In flight past the actor's 20 ms (a real-time threshold), so the next requests start the second
    // thread by that rule whatever their number. The migration runs a few hundred ms: still running.
    await new Promise((resolve) => setTimeout(resolve, 30));
    const replies = await Promise.all([first, ...Array.from({ length: 15 }, () => race.request('/race/count'))]);
    expect(replies.map((r) => r.status)).toEqual(Array(16).fill(200));
    expect(replies.every((r) => r.json().n === 3)).toBe(true);
    // The second thread did start (and so opened the database while the first one migrated).
    await eventually(() => tasks() - baseline === 2);
    const db = new Database(join(race.dataDir, 'localhost', 'dev', 'race', 'db.sqlite'), { readonly: true });
    try {
      expect(db.prepare('SELECT name FROM _anvil_migrations').pluck().all()).toEqual(['001-slow.sql']);
      expect(db.prepare('SELECT count(*) FROM hits').pluck().get()).toBe(3);
    } finally {
      db.close();
    }
  });
});
