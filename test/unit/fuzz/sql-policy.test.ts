import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import type Database from 'better-sqlite3';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiDatabase } from '../../../src/directives/database/api-database.js';
import { AnvilError } from '../../../src/shared/errors.js';
import { FUZZ_TEST_TIMEOUT_MS, fuzzParameters } from '../../helpers/fuzz-budget.js';

// The SQL policy on random SQL built from the tokens of every known way out (ATTACH, VACUUM INTO,
// PRAGMA, load_extension, readfile, table-valued pragmas, sqlite_dbpage), hidden by comments, quotes,
// case, unicode and string concatenation. Each statement runs against a real database file, as
// DatabaseQuery runs it (and as a migration runs it), in a folder that is also the process's current
// folder (where a relative file name would land). Either the policy refuses it or it runs; after it,
// the folder holds the API's database (and its -wal/-shm) and a neighbour's file, unchanged, and
// nothing else; the connection has no other database attached; any error is Anvil's own.

let root: string;
let apiDir: string;
let database: ApiDatabase;
let connection: Database.Database;
let neighbourDigest: string;
let cwd: string;
let releaseCount = 0;
let releasesRoot: string;

const NEIGHBOUR = 'neighbour.sqlite';
const OWN = new Set(['api/db.sqlite', 'api/db.sqlite-wal', 'api/db.sqlite-shm', NEIGHBOUR]);

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'anvil-sql-fuzz-'));
  releasesRoot = mkdtempSync(join(tmpdir(), 'anvil-sql-fuzz-releases-'));
  apiDir = join(root, 'api');
  cwd = process.cwd();
  process.chdir(root);
  // Another API's database beside this one: a valid SQLite file the statements aim at.
  const seed = new ApiDatabase(join(root, 'seed'));
  seed.run('CREATE TABLE secrets (v TEXT)');
  seed.run("INSERT INTO secrets VALUES ('neighbour data')");
  seed.close();
  writeFileSync(join(root, NEIGHBOUR), readFileSync(join(root, 'seed', 'db.sqlite')));
  rmSync(join(root, 'seed'), { recursive: true, force: true });
  neighbourDigest = digest(join(root, NEIGHBOUR));
  database = new ApiDatabase(apiDir);
  database.run('CREATE TABLE t (a, b)');
  database.run("INSERT INTO t VALUES (1, 'x')");
  connection = (database as unknown as { db: Database.Database }).db;
});
afterAll(() => {
  database?.close();
  process.chdir(cwd);
  rmSync(root, { recursive: true, force: true });
  rmSync(releasesRoot, { recursive: true, force: true });
});

function digest(file: string): string {
  return createHash('sha256').update(readFileSync(file)).digest('hex');
}

/** Every file under the folder, relative. */
function files(dir = root): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const full = join(dir, d.name);
    return d.isDirectory() ? files(full) : [relative(root, full)];
  });
}

function expectConfined(sql: string): void {
  const stray = files().filter((f) => !OWN.has(f));
  expect(stray, `files made by: ${sql}`).toEqual([]);
  expect(digest(join(root, NEIGHBOUR)), `the neighbour's file changed by: ${sql}`).toBe(neighbourDigest);
  expect(statSync(join(root, NEIGHBOUR)).isFile()).toBe(true);
  const attached = (connection.pragma('database_list') as Array<{ name: string; file: string }>).filter(
    (d) => d.name !== 'main' && d.name !== 'temp',
  );
  expect(attached, `attached by: ${sql}`).toEqual([]);
}

/** A keyword in a random case, sometimes in unicode look-alikes SQLite does not fold. */
const word = (w: string) =>
  fc.constantFrom(
    w,
    w.toUpperCase(),
    w.toLowerCase(),
    [...w].map((c, i) => (i % 2 ? c.toUpperCase() : c.toLowerCase())).join(''),
    w.replace(/a/gi, '\u0430'),
    w.replace(/i/gi, '\u0130'),
  );

const gap = fc.constantFrom(
  ' ',
  '  ',
  '\t',
  '\n',
  '\r\n',
  '\u000b',
  '\u000c',
  '/**/',
  '/* ; */',
  '-- x\n',
  ' /*/ ATTACH */ ',
  '',
);
/** File names in every spelling a statement could use to reach another file. */
const target = fc.constantFrom(
  `'${NEIGHBOUR}'`,
  `'./${NEIGHBOUR}'`,
  "'new.sqlite'",
  "'api/other.sqlite'",
  "'file:new.sqlite?mode=rwc'",
  `'file:${NEIGHBOUR}'`,
  "'file::memory:?cache=shared'",
  "''",
  "':memory:'",
  `'neigh' || 'bour.sqlite'`,
  'char(110, 101, 119, 46, 100, 98)',
  "printf('%s.sqlite', 'new')",
  "x'6e65772e64620a'",
  '?',
  ':path',
  '"new.sqlite"',
  '[new.sqlite]',
  '`new.sqlite`',
  "'..' || '/escaped.sqlite'",
);
const tail = fc.constantFrom('', ';', '; SELECT 1', ';;', ' -- ;', "; ATTACH 'x.sqlite' AS x", ' KEY x', ' AS x');

/** The pieces in order, joined. */
function seq(...parts: Array<string | fc.Arbitrary<string>>): fc.Arbitrary<string> {
  return fc.tuple(...parts.map((p) => (typeof p === 'string' ? fc.constant(p) : p))).map((texts) => texts.join(''));
}

const attack = fc.oneof(
  seq(
    gap,
    word('attach'),
    gap,
    fc.constantFrom('', 'DATABASE '),
    target,
    gap,
    word('as'),
    gap,
    fc.constantFrom('x', 'main', '"x"', '[x]', 'temp'),
    tail,
  ),
  seq(gap, word('vacuum'), gap, fc.constantFrom('', 'main ', 'temp ', 'x '), word('into'), gap, target, tail),
  seq(
    gap,
    word('pragma'),
    gap,
    fc.constantFrom(
      'journal_mode=DELETE',
      'main.journal_mode = MEMORY',
      'writable_schema=1',
      'trusted_schema=1',
      'database_list',
      "temp_store_directory = '.'",
      "data_store_directory = '.'",
      'wal_checkpoint(TRUNCATE)',
    ),
    tail,
  ),
  seq(
    fc.constantFrom('SELECT ', 'select ', 'VALUES(', 'SELECT 1 WHERE '),
    fc.constantFrom(
      'load_extension',
      '"load_extension"',
      '[load_extension]',
      'readfile',
      'writefile',
      'edit',
      'fts3_tokenizer',
      'sqlite_compileoption_get',
      'LOAD_EXTENSION',
    ),
    gap,
    '(',
    target,
    fc.constantFrom(')', ', 1)', ", 'x')"),
    tail,
  ),
  seq(
    fc.constantFrom('SELECT * FROM ', 'SELECT file FROM ', 'WITH d AS (SELECT * FROM '),
    fc.constantFrom(
      'pragma_database_list',
      '"pragma_database_list"',
      "'pragma_database_list'",
      "main.pragma_table_info('t')",
      'sqlite_dbpage',
      'SQLITE_DBPAGE',
      'pragma_function_list',
    ),
    fc.constantFrom('', ') SELECT * FROM d'),
    tail,
  ),
  seq(
    fc.constantFrom('CREATE TRIGGER ', 'CREATE TEMP TRIGGER '),
    fc.constantFrom('tr', 'tr2'),
    ' AFTER INSERT ON t BEGIN ',
    fc.constantFrom(
      'SELECT 1',
      "ATTACH 'new.sqlite' AS y",
      'VACUUM',
      "SELECT load_extension('x')",
      'INSERT INTO t VALUES (2, 2)',
    ),
    '; END',
    tail,
  ),
  // Never `INSERT INTO t SELECT * FROM t`: each run would double the table.
  seq(
    fc.constantFrom('CREATE VIEW v AS ', 'CREATE TABLE c AS ', 'INSERT INTO t '),
    fc.constantFrom('SELECT * FROM pragma_database_list', "SELECT 1, 'x'", 'SELECT a, b FROM t LIMIT 1'),
    tail,
  ),
  seq(word('begin'), ' ', tail),
  seq(
    fc.constantFrom('EXPLAIN ', 'explain query plan '),
    fc.constantFrom("ATTACH 'new.sqlite' AS x", "VACUUM INTO 'new.sqlite'", 'PRAGMA database_list'),
  ),
);

/** Token soup: the same pieces in any order, for what the templates above do not think of. */
const soup = fc
  .array(
    fc.oneof(
      fc.constantFrom(
        'ATTACH',
        'attach',
        'DETACH',
        'VACUUM',
        'INTO',
        'PRAGMA',
        'SELECT',
        'FROM',
        'AS',
        'DATABASE',
        'main',
        'x',
        'load_extension',
        'readfile',
        '(',
        ')',
        ',',
        ';',
        "'",
        '"',
        '`',
        '[',
        ']',
        '--',
        '/*',
        '*/',
        '||',
        '?',
        ':a',
        '\u00e9',
        '\u0130',
        '\uff21TTACH',
        '1',
        'END',
        'BEGIN',
        'CREATE',
        'TRIGGER',
        'TABLE',
        'ON',
        't',
        'WITH',
        'RETURNING',
        '*',
      ),
      target,
      gap,
    ),
    { maxLength: 14 },
  )
  .map((parts) => parts.join(' '));

/**
 * Statements that run when nothing is appended (one `?` for run, `:path` for all), with the same
 * tails: without them, a run of 3000 random statements ran none about one time in twenty (the
 * other forms are refused or fail on their parameters), and the check that some ran failed.
 */
const runnable = seq(
  fc.constantFrom(
    'SELECT ? AS v',
    'SELECT a FROM t WHERE a = ?',
    'SELECT :path AS p',
    'UPDATE t SET b = b WHERE a = ?',
  ),
  gap,
  tail,
);

const statement = fc.oneof(attack, soup, runnable);

const outcomes = { ran: 0, refused: 0, failed: 0 };

/** Runs `sql` as DatabaseQuery does: it is refused, fails, or runs; any error is Anvil's own. */
function runAsQuery(sql: string): void {
  for (const mode of ['run', 'all'] as const) {
    try {
      if (mode === 'run') database.run(sql, [null]);
      else database.all(sql, { path: 'new.sqlite' });
      outcomes.ran += 1;
    } catch (error) {
      expect(error, `${mode}: ${sql}`).toBeInstanceOf(AnvilError);
      outcomes[(error as AnvilError).code === 'ANVIL_ERR_SQL_REFUSED' ? 'refused' : 'failed'] += 1;
    }
    expectConfined(sql);
  }
}

describe('the SQL policy on random SQL', () => {
  it(
    'no statement reaches another database file (DatabaseQuery)',
    () => {
      fc.assert(fc.property(statement, runAsQuery), fuzzParameters(3000));
      // Some statements ran (the checks above then saw what they did), some were refused.
      expect(outcomes.ran).toBeGreaterThan(0);
      expect(outcomes.refused).toBeGreaterThan(0);
    },
    FUZZ_TEST_TIMEOUT_MS,
  );

  it(
    'no migration reaches another database file (several statements per file)',
    () => {
      fc.assert(
        fc.property(fc.array(statement, { minLength: 1, maxLength: 4 }), (statements) => {
          releaseCount += 1;
          // The release lives outside the watched folder; a migration's relative file names still land in it (the current folder).
          const release = join(releasesRoot, String(releaseCount));
          mkdirSync(join(release, 'Assets', 'db'), { recursive: true });
          const sql = statements.join(';\n');
          writeFileSync(join(release, 'Assets', 'db', `${String(releaseCount).padStart(6, '0')}.sql`), sql);
          try {
            database.migrate(release);
          } catch (error) {
            expect(error, sql).toBeInstanceOf(AnvilError);
          }
          rmSync(release, { recursive: true, force: true });
          expectConfined(sql);
        }),
        fuzzParameters(1000),
      );
    },
    FUZZ_TEST_TIMEOUT_MS,
  );
});
