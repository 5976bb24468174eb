import fc from 'fast-check';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { checkPostgresSql } from '../../src/directives/database/postgres/pg-policy.js';
import { provisionApi } from '../../src/directives/database/postgres/pg-provision.js';
import { AnvilError } from '../../src/shared/errors.js';
import { FUZZ_TEST_TIMEOUT_MS, fuzzParameters } from '../helpers/fuzz-budget.js';
import { FreshPostgres } from '../helpers/postgres.js';

// The PostgreSQL policy on random SQL built from the ways out it refuses (session settings,
// advisory locks, LISTEN/NOTIFY, other schemas, catalogs, SQL run from text), hidden by comments
// (nested), quotes, brackets, casts, case and escapes. What the policy lets through runs as the
// API's role on a real connection, as the helper thread runs it (extended protocol, one statement);
// after it the session still has its settings, holds no advisory lock, listens to nothing, and
// nothing of the other API's schema came back. Any refusal is Anvil's own.

let db: FreshPostgres;
let own: { schema: string; client: pg.Client };
let other: string;

async function loginAs(schema: string, password: string): Promise<pg.Client> {
  const url = new URL(db.url);
  url.username = schema;
  url.password = password;
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  client.on('error', () => undefined);
  return client;
}

beforeAll(async () => {
  db = await FreshPostgres.create('anvil_pgfuzz');
  const mine = await provisionApi(db.url, { host: 'localhost', env: 'dev', key: 'fuzz' });
  const theirs = await provisionApi(db.url, { host: 'localhost', env: 'dev', key: 'other' });
  other = theirs.schema;
  const them = await loginAs(theirs.schema, theirs.password);
  await them.query("CREATE TABLE secrets (v text); INSERT INTO secrets VALUES ('neighbour-secret')");
  await them.end();
  own = { schema: mine.schema, client: await loginAs(mine.schema, mine.password) };
  await own.client.query("CREATE TABLE t (a int, b text); INSERT INTO t VALUES (1, 'x')");
}, 60_000);

afterAll(async () => {
  await own?.client.end().catch(() => undefined);
  if (db === undefined) return;
  const roles = await db.query<{ role: string }>('SELECT role FROM anvil_pgdb.api_roles').catch(() => []);
  await db.drop();
  const admin = new pg.Client({ connectionString: db.url.replace(`/${db.name}`, '/postgres') });
  await admin.connect();
  for (const { role } of roles)
    await admin.query(`DROP ROLE IF EXISTS ${admin.escapeIdentifier(role)}`).catch(() => undefined);
  await admin.end();
});

const word = (w: string) =>
  fc.constantFrom(w, w.toUpperCase(), [...w].map((c, i) => (i % 2 ? c.toUpperCase() : c)).join(''), `"${w}"`);
const gap = fc.constantFrom(' ', '\n', '\t', '/**/', '/* /* */ */', '-- x\n', ' /* ; */ ', '');
const setting = fc.constantFrom("'statement_timeout'", "'search_path'", "'lock_timeout'", "'statement_' || 'timeout'");
const tail = fc.constantFrom('', ';', '; SELECT 1', ' -- ;', ' /* */ ', '; RESET ALL');
const table = () =>
  fc.constantFrom(
    `${other}.secrets`,
    `"${other}".secrets`,
    `${other} . secrets`,
    'pg_catalog.pg_class',
    'pg_class',
    'information_schema.tables',
    'public.t',
    't',
    'pg_temp.t',
  );

function seq(...parts: Array<string | fc.Arbitrary<string>>): fc.Arbitrary<string> {
  return fc.tuple(...parts.map((p) => (typeof p === 'string' ? fc.constant(p) : p))).map((texts) => texts.join(''));
}

const attack = fc.oneof(
  seq(
    gap,
    word('set'),
    gap,
    fc.constantFrom(
      'statement_timeout = 0',
      'search_path = public',
      'SESSION statement_timeout TO 0',
      'LOCAL lock_timeout = 0',
      'ROLE postgres',
    ),
    tail,
  ),
  seq(gap, word('reset'), gap, fc.constantFrom('ALL', 'statement_timeout', 'search_path'), tail),
  seq(
    'SELECT ',
    fc.constantFrom('', 'a, ', 'arr[1], ', '1::int, '),
    word('set_config'),
    gap,
    '(',
    setting,
    ", '0', false)",
    fc.constantFrom('', ' FROM t', ', x[2] FROM t'),
    tail,
  ),
  seq(
    'SELECT ',
    fc.constantFrom(
      'pg_advisory_lock',
      'pg_try_advisory_lock',
      'pg_advisory_xact_lock',
      'PG_ADVISORY_LOCK',
      'pg_catalog.pg_advisory_lock',
    ),
    '(',
    fc.constantFrom('1', '42', '1, 2'),
    ')',
    tail,
  ),
  seq(gap, word('listen'), gap, fc.constantFrom('anvil', '"anvil"'), tail),
  seq(gap, fc.constantFrom('NOTIFY anvil', "SELECT pg_notify('anvil', 'x')"), tail),
  seq('SELECT ', fc.constantFrom('*', 'v', 'count(*)'), ' FROM ', table(), tail),
  seq(
    'SELECT ',
    fc.constantFrom('query_to_xml', 'ts_stat', 'cursor_to_xml', 'table_to_xml'),
    "('select set_config(''statement_timeout'', ''0'', false)', true, true, '')",
    tail,
  ),
  seq(
    'SELECT ',
    fc.constantFrom(
      "E'\\'' , set_config('statement_timeout','0',false) --'",
      "$$'$$, set_config('statement_timeout','0',false) --'",
      "1 /* /* */ ' */ , set_config('statement_timeout','0',false) --'",
      "U&\"\\0073et_config\"('statement_timeout', '0', false)",
      "[1], set_config('statement_timeout','0',false), x[2]",
      "`a`, set_config('statement_timeout','0',false), `b`",
    ),
    tail,
  ),
  seq(
    gap,
    fc.constantFrom(
      'DO ',
      'COPY t TO ',
      'CREATE FUNCTION f() RETURNS int LANGUAGE sql AS ',
      'ALTER ROLE CURRENT_USER SET statement_timeout = ',
      'CREATE SCHEMA ',
    ),
    fc.constantFrom("'select 1'", 'stdout', '0', 'x'),
    tail,
  ),
  seq(
    'SELECT ',
    fc.constantFrom(
      "'x'::regclass",
      "to_regclass('x')",
      "current_setting('statement_timeout')",
      "has_table_privilege('t', 'select')",
    ),
    tail,
  ),
);

it(
  "lets nothing through that escapes the API's schema or changes its session",
  async () => {
    await fc.assert(
      fc.asyncProperty(attack, async (sql) => {
        try {
          checkPostgresSql(sql, { schema: own.schema });
        } catch (error) {
          expect(error, `not a refusal of Anvil's: ${sql}`).toBeInstanceOf(AnvilError);
          return;
        }
        const rows = await own.client.query({ text: sql, values: [] }).then(
          (r) => r.rows,
          () => [],
        );
        expect(JSON.stringify(rows), `the neighbour's data came back: ${sql}`).not.toContain('neighbour-secret');
        const session = await own.client.query(
          "SELECT current_setting('statement_timeout') AS t, current_setting('search_path') AS p, (SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()) AS locks, (SELECT count(*) FROM pg_listening_channels()) AS listening",
        );
        expect(session.rows[0], `the session changed: ${sql}`).toEqual({
          t: '5s',
          p: own.schema,
          locks: '0',
          listening: '0',
        });
      }),
      fuzzParameters(300),
    );
  },
  FUZZ_TEST_TIMEOUT_MS,
);
