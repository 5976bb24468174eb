import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiDatabaseContract, notesApi } from '../database/api-database-contract.js';
import { startInstance, type ApiFiles, type TestInstance } from '../helpers/instance.js';
import { FreshPostgres } from '../helpers/postgres.js';

// `database: postgres`: each API its own schema and login role in the cluster's Postgres
// (DATABASE_URL), on a fresh database per run. The roles a run made are dropped with it.

/** Starts an instance on `db`; the cleanup stops it. */
async function onPostgres(db: FreshPostgres, apis: Record<string, ApiFiles>): Promise<TestInstance> {
  return startInstance({ apis, env: { DATABASE_URL: db.url } });
}

/** Drops the database and the API roles made in it (roles are the cluster's, not the database's). */
async function dropAll(db: FreshPostgres): Promise<void> {
  const roles = await db.query<{ role: string }>('SELECT role FROM anvil_pgdb.api_roles').catch(() => []);
  await db.drop();
  const admin = new pg.Client({ connectionString: db.url.replace(`/${db.name}`, '/postgres') });
  await admin.connect();
  try {
    for (const { role } of roles) await admin.query(`DROP ROLE IF EXISTS ${admin.escapeIdentifier(role)}`);
  } finally {
    await admin.end();
  }
}

apiDatabaseContract('postgres', async (apis) => {
  const db = await FreshPostgres.create('anvil_pgdb');
  const instance = await onPostgres(db, apis);
  return {
    instance,
    async cleanup() {
      await instance.dispose();
      await dropAll(db);
    },
  };
});

const json = { 'content-type': 'application/json' };

describe('database: postgres, between APIs and instances', () => {
  let db: FreshPostgres;
  let one: TestInstance;
  let two: TestInstance;
  const sql = (instance: TestInstance, key: string, text: string, params?: unknown[]) =>
    instance.request(`/${key}/sql`, { method: 'POST', headers: json, body: JSON.stringify({ sql: text, params }) });

  beforeAll(async () => {
    db = await FreshPostgres.create('anvil_pgdb');
    const apis = { x: notesApi('postgres', 'x'), y: notesApi('postgres', 'y') };
    one = await onPostgres(db, apis);
    two = await onPostgres(db, apis);
  }, 90_000);
  afterAll(async () => {
    await Promise.all([one?.dispose(), two?.dispose()]);
    if (db) await dropAll(db);
  });

  /** The schema (and role) of an API, as the catalog has it. */
  async function schemaOf(key: string): Promise<string> {
    const rows = await db.query<{ role: string }>('SELECT role FROM anvil_pgdb.api_roles WHERE role LIKE $1', [
      `anvil_api_${key}_%`,
    ]);
    expect(rows).toHaveLength(1);
    return rows[0]!.role;
  }

  it('serves a row written through one instance through the other', async () => {
    const written = await one.request('/x/notes', {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ title: 'shared', n: 42 }),
    });
    expect(written.status).toBe(200);
    const read = await two.request(`/x/notes/${written.json().id}`);
    expect(read.status).toBe(200);
    expect(read.json()).toEqual({ id: written.json().id, title: 'shared', n: 42 });
    // Through a custom directive on the other instance too.
    expect((await two.request(`/x/custom/${written.json().id}`)).json().row.title).toBe('shared');
  });

  it('gives each API its own schema and role, with its settings, and the migrations ran once', async () => {
    const x = await schemaOf('x');
    const y = await schemaOf('y');
    expect(x).not.toBe(y);
    const roles = await db.query<{
      rolname: string;
      rolsuper: boolean;
      rolcreaterole: boolean;
      rolcreatedb: boolean;
      rolconnlimit: number;
      rolconfig: string[];
    }>(
      'SELECT rolname, rolsuper, rolcreaterole, rolcreatedb, rolconnlimit, rolconfig FROM pg_roles WHERE rolname = $1',
      [x],
    );
    expect(roles[0]).toMatchObject({ rolsuper: false, rolcreaterole: false, rolcreatedb: false });
    expect(roles[0]!.rolconnlimit).toBeGreaterThan(0);
    expect(roles[0]!.rolconfig).toEqual(
      expect.arrayContaining([`search_path=${x}`, 'statement_timeout=5000', 'temp_file_limit=256MB']),
    );
    const seeds = await db.query<{ c: string }>(`SELECT count(*) AS c FROM ${x}.notes WHERE title = 'seed'`);
    expect(seeds[0]!.c).toBe('1');
    const recorded = await db.query(`SELECT name FROM ${x}._anvil_migrations ORDER BY name`);
    expect(recorded.map((r) => r.name)).toEqual(['001-notes.sql', '002-seed.sql']);
  });

  it("refuses every escape from the API's own schema, with a message naming it", async () => {
    await one.request('/y/notes', { method: 'POST', headers: json, body: JSON.stringify({ title: 'y-secret', n: 1 }) });
    const y = await schemaOf('y');
    const x = await schemaOf('x');
    const escapes: Array<[string, RegExp]> = [
      [`select * from ${y}.notes`, /schema .* is not the API's own/],
      [`select * from "${y}".notes`, /schema .* is not the API's own/],
      ['select * from public.t', /schema public is not the API's own/],
      ['select * from anvil_pgdb.api_roles', /schema anvil_pgdb is not the API's own/],
      ['select nspname from pg_namespace', /pg_namespace is not allowed/],
      ['select relname from pg_catalog.pg_class', /pg_catalog is not allowed/],
      ['select table_name from information_schema.tables', /information_schema is not allowed/],
      ['select rolname from pg_roles', /pg_roles is not allowed/],
      ['select * from pg_stat_activity', /pg_stat_activity is not allowed/],
      [`select '${y}.notes'::regclass`, /regclass is not allowed/],
      [`select to_regclass('${y}.notes')`, /not allowed/],
      ["select has_schema_privilege('x', 'usage')", /privilege checks/],
      ['set search_path = public', /SET is not allowed/],
      ['SET statement_timeout = 0', /SET is not allowed/],
      ['reset statement_timeout', /RESET is not allowed/],
      ["select set_config('statement_timeout', '0', false)", /set_config\(\) is not allowed/],
      ["select current_setting('data_directory')", /current_setting\(\) is not allowed/],
      ["do 'begin perform 1; end'", /DO is not allowed/],
      ['copy notes to stdout', /COPY is not allowed/],
      ['listen anvil', /LISTEN is not allowed/],
      ["notify anvil, 'x'", /NOTIFY is not allowed/],
      ["select pg_notify('anvil', 'x')", /pg_notify\(\) is not allowed/],
      ['select pg_advisory_lock(1)', /advisory locks are not allowed/],
      ['select pg_try_advisory_xact_lock(1)', /advisory locks are not allowed/],
      ["select query_to_xml('select 1', true, true, '')", /SQL given as text/],
      ['create role sneaky login', /CREATE ROLE is not allowed/],
      [`alter role ${x} set statement_timeout = 0`, /ALTER ROLE is not allowed/],
      ['create user sneaky', /CREATE USER is not allowed/],
      ['create schema other', /CREATE SCHEMA is not allowed/],
      ["create function f() returns int language sql as 'select 1'", /CREATE FUNCTION is not allowed/],
      ["create or replace function f() returns int language sql as 'select 1'", /CREATE FUNCTION is not allowed/],
      ['create extension dblink', /CREATE EXTENSION is not allowed/],
      [`grant select on notes to public`, /GRANT is not allowed/],
      ['alter table notes owner to postgres', /OWNER TO is not allowed/],
      [`alter table notes set schema public`, /SET SCHEMA is not allowed/],
      ['begin', /transaction control/],
      ['commit', /transaction control/],
      ['select $$x$$', /dollar-quoted/],
      ["select E'\\'' , set_config('a','b',false) --'", /E'…' strings/],
      // Block comments nest in PostgreSQL: what SQLite would read as a string here is code.
      ["select 1 /* /* */ ' */ , set_config('a','b',false) --'", /set_config\(\) is not allowed/],
      ["select arr[1], set_config('a','b',false), x[2] from notes", /set_config\(\) is not allowed/],
      ["select lo_import('/etc/passwd')", /server functions/],
      ["select U&\"\\0073et_config\"('a', 'b', false)", /Unicode escapes/],
      ["select U&'\\0041'", /Unicode escapes/],
      ['show listen_addresses', /SHOW is not allowed/],
      ['select inet_server_addr()', /server's addresses/],
      ['select * from pg_temp.t', /pg_temp is not allowed/],
      ['drop owned by current_user', /DROP OWNED is not allowed/],
      ['alter default privileges grant select on tables to public', /ALTER DEFAULT is not allowed/],
      ['prepare p as select 1', /PREPARE is not allowed/],
      ['declare c cursor for select 1', /DECLARE/],
      ['create trigger t before insert on notes execute function f()', /CREATE TRIGGER is not allowed/],
      ['create language plpythonu', /CREATE LANGUAGE is not allowed/],
      ["select pg_read_file('/etc/passwd')", /not allowed/],
    ];
    for (const [text, expected] of escapes) {
      const answer = await sql(one, 'x', text);
      expect({ text, status: answer.status }).toEqual({ text, status: 500 });
      expect({ text, error: answer.json().error }).toEqual({ text, error: expect.stringMatching(expected) });
    }
    // …and what PostgreSQL reads as a comment stays one.
    const commented = await sql(one, 'x', "select 1 as one /* /* */ , set_config('a','b',false) */");
    expect(commented.json()).toEqual([{ one: 1 }]);
    // Nothing of y's reached x, and x's own schema still answers.
    expect((await sql(one, 'x', 'select count(*) as c from notes where title = ?', ['y-secret'])).json()).toEqual([
      { c: 0 },
    ]);
    expect((await sql(one, 'x', `select count(*) as c from ${x}.notes where title = ?`, ['seed'])).json()).toEqual([
      { c: 1 },
    ]);
  });

  it("stops the role itself at the PostgreSQL level: x cannot read y's schema or connect elsewhere", async () => {
    const x = await schemaOf('x');
    const y = await schemaOf('y');
    const { password } = (
      await db.query<{ password: string }>('SELECT password FROM anvil_pgdb.api_roles WHERE role = $1', [x])
    )[0]!;
    const url = new URL(db.url);
    url.username = x;
    url.password = password;
    const asX = new pg.Client({ connectionString: url.toString() });
    await asX.connect();
    try {
      await expect(asX.query(`SELECT * FROM ${y}.notes`)).rejects.toThrow(/permission denied for schema/);
      await expect(asX.query('SELECT * FROM anvil_pgdb.api_roles')).rejects.toThrow(/permission denied for schema/);
      await expect(asX.query(`CREATE TABLE ${y}.planted (id int)`)).rejects.toThrow(/permission denied for schema/);
      // What the policy refuses from the API, a session of the role could do; the settings are its defaults.
      expect((await asX.query('SHOW search_path')).rows[0].search_path).toBe(x);
      expect((await asX.query('SHOW statement_timeout')).rows[0].statement_timeout).toBe('5s');
    } finally {
      await asX.end();
    }
    url.pathname = '/postgres';
    const elsewhere = new pg.Client({ connectionString: url.toString() });
    await expect(elsewhere.connect()).rejects.toThrow(
      /permission denied for database|not permitted to log in|does not exist/,
    );
    await elsewhere.end().catch(() => undefined);
  });

  it("cancels a statement past the role's statement_timeout with a clear error", async () => {
    const started = Date.now();
    const slow = await sql(two, 'x', 'select pg_sleep(8) as slept');
    expect(slow.status).toBe(500);
    expect(slow.json().error).toMatch(/ran longer than the API's statement_timeout \(5000 ms\) and was cancelled/);
    expect(Date.now() - started).toBeLessThan(8000);
    // The same from a custom directive's state.db: its thread waited, its CPU limit (50 ms) was not spent.
    const blocked = await two.request('/x/custom-sql', {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ sql: 'select pg_sleep(8) as slept' }),
    });
    expect(blocked.status).toBe(500);
    expect(blocked.json().error).toMatch(/ran longer than the API's statement_timeout \(5000 ms\) and was cancelled/);
    const refused = await two.request('/x/custom-sql', {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ sql: "select set_config('statement_timeout', '0', false)" }),
    });
    expect(refused.json().error).toMatch(/set_config\(\) is not allowed/);
    const fine = await two.request('/x/custom-sql', {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ sql: 'select count(*) as c from notes where n >= ?', params: [0] }),
    });
    expect(fine.status).toBe(200);
    expect(fine.json()[0].c).toBeGreaterThan(0);
  }, 30_000);
});

describe('database: postgres without DATABASE_URL', () => {
  it('refuses the deploy, pointing at the line', async () => {
    const instance = await startInstance({ apis: { notes: notesApi('postgres') }, env: { DATABASE_URL: '' } });
    try {
      expect((await instance.request('/notes/notes')).status).toBe(404);
      expect(instance.output()).toMatch(
        /api\.yaml:3:\d+ database: postgres needs the cluster's Postgres: start the instance with DATABASE_URL/,
      );
    } finally {
      await instance.dispose();
    }
  });
});
