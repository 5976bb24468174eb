import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AnvilError } from '../../src/shared/errors.js';
import { checkSqlProgram, checkSqlText } from '../../src/directives/database/sql-checks.js';
import { SqlPolicy } from '../../src/directives/database/sql-policy.js';
import { splitSqlStatements } from '../../src/directives/database/sql-statements.js';
import { tokenizeSql } from '../../src/directives/database/sql-tokens.js';

let dir: string;
let db: Database.Database;
let policy: SqlPolicy;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'anvil-sql-policy-'));
  db = new Database(join(dir, 'db.sqlite'));
  db.exec('CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT, pragma TEXT, "attach" TEXT)');
  policy = new SqlPolicy(db);
});
afterAll(() => {
  db?.close();
  rmSync(dir, { recursive: true, force: true });
});

function refusal(sql: string): string {
  try {
    policy.check(sql);
  } catch (error) {
    expect(error).toBeInstanceOf(AnvilError);
    expect((error as AnvilError).code).toBe('ANVIL_ERR_SQL_REFUSED');
    expect((error as AnvilError).status).toBe(500);
    return (error as AnvilError).message;
  }
  throw new Error(`not refused: ${sql}`);
}

describe('refused statements', () => {
  const forms: Array<[string, string, RegExp]> = [
    ['ATTACH', "ATTACH DATABASE '/tmp/other.db' AS other", /ATTACH is not allowed/],
    ['lower-case attach', "attach '/tmp/other.db' as other", /ATTACH is not allowed/],
    ['comment before', "/*x*/ATTACH '/tmp/other.db' AS o", /ATTACH is not allowed/],
    [
      'line comment and newlines before',
      "-- first\n\n  \t/* two */\r\nAttach '/tmp/o.db' AS o",
      /ATTACH is not allowed/,
    ],
    ['URI filename', "ATTACH 'file:/tmp/o.db?mode=rwc' AS o", /ATTACH is not allowed/],
    ['DETACH', 'DETACH DATABASE other', /DETACH is not allowed/],
    ['detach, lower case, comments', '/* a */ detach /* b */ other', /DETACH is not allowed/],
    ['VACUUM', 'VACUUM', /VACUUM is not allowed/],
    ['VACUUM INTO', "VACUUM INTO '/tmp/copy.db'", /VACUUM is not allowed/],
    ['vacuum main into, odd spacing', "\n  vacuum\tmain\ninto '/tmp/copy.db'", /VACUUM is not allowed/],
    ['PRAGMA', 'PRAGMA database_list', /PRAGMA is not allowed/],
    ['pragma set', 'pragma writable_schema = 1', /PRAGMA is not allowed/],
    ['pragma after comments', '--x\n/*y*/pragma trusted_schema=ON', /PRAGMA is not allowed/],
    ['pragma with a schema', 'PRAGMA main.journal_mode = DELETE', /PRAGMA is not allowed/],
    ['pragma after a vertical tab', '\u000bPRAGMA trusted_schema=1', /PRAGMA is not allowed/],
    ['pragma_ table-valued function', 'SELECT * FROM pragma_database_list', /pragma_database_list is not allowed/],
    ['upper-case pragma_ function', 'select file from PRAGMA_DATABASE_LIST', /PRAGMA_DATABASE_LIST is not allowed/],
    ['quoted pragma_ function', 'SELECT * FROM "pragma_database_list"', /pragma_database_list is not allowed/],
    ['bracketed pragma_ function', "SELECT * FROM [pragma_table_info]('users')", /pragma_table_info is not allowed/],
    ['back-quoted pragma_ function', "SELECT * FROM `pragma_index_list`('users')", /pragma_index_list is not allowed/],
    [
      'pragma_ function as a string literal',
      "SELECT * FROM 'pragma_database_list'",
      /pragma_database_list is not allowed/,
    ],
    [
      'schema-qualified pragma_ function',
      'SELECT * FROM main.pragma_database_list',
      /pragma_database_list is not allowed/,
    ],
    [
      'pragma_ function in a CTE',
      'WITH d AS (SELECT file FROM pragma_database_list) SELECT * FROM d',
      /pragma_database_list/,
    ],
    [
      'pragma_ function in a subquery',
      'SELECT (SELECT file FROM pragma_database_list LIMIT 1) AS f',
      /pragma_database_list/,
    ],
    ['pragma_ function in a view', 'CREATE VIEW paths AS SELECT * FROM pragma_database_list', /pragma_database_list/],
    ['load_extension()', "SELECT load_extension('/tmp/evil.so')", /load_extension\(\) is not allowed/],
    ['LOAD_EXTENSION, comments', "SELECT /**/LOAD_EXTENSION/**/('/tmp/evil.so')", /load_extension\(\) is not allowed/],
    ['quoted load_extension', 'SELECT "load_extension"(\'/tmp/evil.so\')', /load_extension\(\) is not allowed/],
    ['load_extension in a CTE', "WITH x AS (SELECT load_extension('/tmp/e')) SELECT * FROM x", /load_extension/],
    ['fts3_tokenizer()', "SELECT fts3_tokenizer('simple')", /fts3_tokenizer\(\) is not allowed/],
    ['fts3_tokenizer, upper case', "select FTS3_TOKENIZER('simple', x'00')", /fts3_tokenizer\(\) is not allowed/],
    ['sqlite_dbpage', 'SELECT * FROM sqlite_dbpage', /sqlite_dbpage is not allowed/],
    ['sqlite_dbpage quoted', 'SELECT data FROM "SQLITE_DBPAGE" WHERE pgno = 1', /sqlite_dbpage is not allowed/],
    ['two statements', 'SELECT 1; SELECT 2', /more than one statement/],
    ['two statements, the second an ATTACH', "SELECT 1;ATTACH '/tmp/x.db' AS x", /more than one statement/],
    ['a statement after a comment', 'SELECT 1 /* ; */; -- x\nDELETE FROM users', /more than one statement/],
    ['a statement after a string with a ;', "SELECT 'a;b'; DROP TABLE users", /more than one statement/],
    [
      'ATTACH hidden after a trigger body',
      "CREATE TRIGGER t1 AFTER INSERT ON users BEGIN SELECT 1; END; ATTACH 'x' AS y",
      /more than one statement/,
    ],
    [
      'ATTACH inside a trigger body',
      "CREATE TRIGGER t2 AFTER INSERT ON users BEGIN SELECT 1; ATTACH 'x' AS y; END",
      /ATTACH is not allowed/,
    ],
    ['EXPLAIN', 'EXPLAIN SELECT 1', /EXPLAIN is not allowed/],
    ['BEGIN', 'BEGIN IMMEDIATE', /BEGIN/],
    ['COMMIT', 'commit', /COMMIT/],
    ['SAVEPOINT', 'SAVEPOINT s1', /SAVEPOINT/],
    ['unterminated string', "SELECT 'abc", /unterminated string literal/],
    ['unterminated identifier', 'SELECT "abc', /unterminated quoted identifier/],
    ['NUL character', 'SELECT 1\u0000; ATTACH', /NUL/],
  ];
  for (const [name, sql, message] of forms) {
    it(name, () => {
      expect(refusal(sql)).toMatch(message);
    });
  }

  it('names what was refused', () => {
    expect(refusal("ATTACH '/tmp/x' AS x")).toBe('SQL refused: ATTACH is not allowed');
  });

  it('remembers the verdict per SQL string', () => {
    const sql = "ATTACH '/tmp/remembered.db' AS r";
    let first: unknown;
    let second: unknown;
    try {
      policy.check(sql);
    } catch (e) {
      first = e;
    }
    try {
      policy.check(sql);
    } catch (e) {
      second = e;
    }
    expect(first).toBeInstanceOf(AnvilError);
    expect(second).toBe(first);
  });
});

describe('allowed statements', () => {
  const allowed = [
    "SELECT 'ATTACH'",
    "SELECT 'VACUUM INTO ''/tmp/x''' AS text",
    "SELECT 'PRAGMA database_list; ATTACH ''x'' AS y' AS s",
    'SELECT pragma FROM users',
    'SELECT "attach", pragma AS vacuum FROM users',
    'SELECT id, name FROM users WHERE id = ?',
    'SELECT id FROM users WHERE name = :name OR name = @name OR name = $name',
    "INSERT INTO users (name, pragma) VALUES ('a', 'b')",
    "UPDATE users SET name = 'load_extension(1)' WHERE id = 1",
    'DELETE FROM users WHERE id = 1',
    "INSERT INTO users (name) VALUES ('x') RETURNING id",
    'WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 10) SELECT i FROM n',
    'WITH u AS (SELECT * FROM users) SELECT count(*) FROM u',
    "SELECT json_extract('{\"a\":1}', '$.a') AS a",
    "SELECT value FROM json_each('[1,2,3]')",
    'SELECT 1;',
    'SELECT 1; -- trailing comment\n/* and another */ ;',
    '  \n-- leading comment\nSELECT 1',
    "SELECT x'00ff' AS b",
    'CREATE TABLE IF NOT EXISTS notes (id INTEGER PRIMARY KEY, body TEXT, attach TEXT)',
    'CREATE INDEX IF NOT EXISTS users_name ON users (name)',
    "CREATE TRIGGER IF NOT EXISTS users_ai AFTER INSERT ON users BEGIN UPDATE users SET pragma = 'x' WHERE id = new.id; END",
    'SELECT count(*) FROM dbstat',
  ];
  for (const sql of allowed) {
    it(JSON.stringify(sql), () => {
      expect(() => policy.check(sql)).not.toThrow();
    });
  }

  it('does not remember errors that are not refusals (the table may exist later)', () => {
    expect(() => policy.check('SELECT * FROM later')).toThrow(/no such table/);
    db.exec('CREATE TABLE later (x)');
    expect(() => policy.check('SELECT * FROM later')).not.toThrow();
  });
});

describe('layer (b): what SQLite compiled', () => {
  it('refuses ATTACH, DETACH, VACUUM INTO, load_extension and fts3_tokenizer by their bytecode alone, running none', () => {
    const target = join(dir, 'attached.db');
    expect(() => checkSqlProgram(db, `ATTACH '${target}' AS other`)).toThrow('SQL refused: ATTACH is not allowed');
    expect(() => checkSqlProgram(db, 'DETACH other')).toThrow('SQL refused: DETACH is not allowed');
    expect(() => checkSqlProgram(db, `VACUUM INTO '${join(dir, 'copy.db')}'`)).toThrow(
      'SQL refused: VACUUM is not allowed',
    );
    expect(() => checkSqlProgram(db, "SELECT load_extension('x')")).toThrow(
      'SQL refused: load_extension() is not allowed',
    );
    expect(() => checkSqlProgram(db, "SELECT upper(fts3_tokenizer('simple'))")).toThrow(
      'SQL refused: fts3_tokenizer() is not allowed',
    );
    expect(() => checkSqlProgram(db, 'BEGIN')).toThrow(/transaction control/);
    expect(existsSync(target)).toBe(false);
    expect(existsSync(join(dir, 'copy.db'))).toBe(false);
  });

  it('lets ordinary statements through', () => {
    expect(() => checkSqlProgram(db, "SELECT 'sqlite_attach(3)', upper('load_extension(1)')")).not.toThrow();
    expect(() => checkSqlProgram(db, 'INSERT INTO users (name) VALUES (?)')).not.toThrow();
  });
});

describe('the tokenizer and the splitter', () => {
  it('skips string literals, quoted identifiers and comments as SQLite does', () => {
    const kinds = tokenizeSql(`SELECT 'a''b', "c""d", [e;f], \`g\`, x'0A', :p, ?1 -- z\n/* w */;`)
      .filter((t) => t.kind !== 'space')
      .map((t) => [t.kind, t.value]);
    expect(kinds).toEqual([
      ['ident', 'select'],
      ['string', "a'b"],
      ['punct', ','],
      ['quoted', 'c"d'],
      ['punct', ','],
      ['quoted', 'e;f'],
      ['punct', ','],
      ['quoted', 'g'],
      ['punct', ','],
      ['blob', "x'0A'"],
      ['punct', ','],
      ['variable', ':p'],
      ['punct', ','],
      ['variable', '?1'],
      ['comment', '-- z\n'],
      ['comment', '/* w */'],
      ['semi', ';'],
    ]);
  });

  it('reads numbers as SQLite does, hiding no name behind them', () => {
    const tokens = (sql: string) =>
      tokenizeSql(sql)
        .filter((t) => t.kind !== 'space')
        .map((t) => `${t.kind}:${t.text}`);
    expect(tokens('1.5e-3 .5 0x1F 1_000 7e 1.2.x 3abc')).toEqual([
      'number:1.5e-3',
      'number:.5',
      'number:0x1F',
      'number:1_000',
      'number:7e',
      'number:1.2',
      'punct:.',
      'ident:x',
      'number:3abc',
    ]);
    expect(() => checkSqlText('SELECT 1.2.pragma_database_list')).toThrow(/pragma_database_list/);
  });

  it('splits on top-level ; only, keeping trigger bodies whole', () => {
    const sql = [
      'CREATE TABLE a (x TEXT);',
      "-- a comment; with a semicolon\nINSERT INTO a VALUES ('1;2');",
      'CREATE TEMP TRIGGER t AFTER INSERT ON a BEGIN INSERT INTO a VALUES (1); DELETE FROM a WHERE x = 2; END;',
      '/* ; */ ;;',
      'SELECT "x;y" FROM a',
    ].join('\n');
    const statements = splitSqlStatements(sql).map((s) => sql.slice(s.start, s.end));
    expect(statements).toEqual([
      'CREATE TABLE a (x TEXT)',
      "INSERT INTO a VALUES ('1;2')",
      'CREATE TEMP TRIGGER t AFTER INSERT ON a BEGIN INSERT INTO a VALUES (1); DELETE FROM a WHERE x = 2; END',
      'SELECT "x;y" FROM a',
    ]);
    expect(checkSqlText(sql, { allowMany: true })).toHaveLength(4);
  });
});

describe('statements with parameters', () => {
  it('are compiled with every parameter bound to NULL, however they are numbered', () => {
    for (const sql of [
      'SELECT ?, ?',
      'SELECT :a, @b, $c, :a',
      'SELECT ?2, ?',
      'SELECT ?, ?1',
      'SELECT ?3',
      'SELECT ?, :name, ?, @name',
      'SELECT name FROM users WHERE id = ? AND name = :name',
    ]) {
      expect(() => policy.check(sql), sql).not.toThrow();
    }
    expect(() => policy.check('SELECT ?, load_extension(:lib)')).toThrow('load_extension() is not allowed');
  });
});
