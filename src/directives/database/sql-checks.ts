/**
 * The two layers of the SQL policy (see sql-policy.ts): (a) the lexical check of the text, (b) the
 * check of the program SQLite compiles from it; and the placeholder arguments (b) lists it with.
 */
import type Database from 'better-sqlite3';
import { Errors } from '../../shared/errors.js';
import { splitSqlStatements, type SqlStatement } from './sql-statements.js';
import { asciiLower, significant, tokenizeSql, type SqlToken } from './sql-tokens.js';

// ------------------------------------------------------------------------------------------------
// Layer (a): lexical

/** Statements refused by their first word. */
const REFUSED_STATEMENTS: Readonly<Record<string, string>> = {
  attach: 'ATTACH is not allowed',
  detach: 'DETACH is not allowed',
  vacuum: 'VACUUM is not allowed',
  pragma: 'PRAGMA is not allowed',
  explain: 'EXPLAIN is not allowed',
  begin: 'transaction control (BEGIN) is not allowed',
  commit: 'transaction control (COMMIT) is not allowed',
  end: 'transaction control (END) is not allowed',
  rollback: 'transaction control (ROLLBACK) is not allowed',
  savepoint: 'transaction control (SAVEPOINT) is not allowed',
  release: 'transaction control (RELEASE) is not allowed',
};
/** Words refused after a `;` inside a statement (a trigger body); END is legitimate there. */
const REFUSED_INNER = new Set(['attach', 'detach', 'vacuum', 'pragma', 'explain']);
/** Functions refused under any spelling (bare or quoted name). */
const REFUSED_FUNCTIONS = new Set(['load_extension', 'fts3_tokenizer']);

/**
 * A name (bare, quoted, or a string literal, which SQLite reads as a name where only a name fits:
 * `FROM 'pragma_database_list'`) that designates a refused table-valued function.
 */
function refusedName(name: string): string | null {
  const lower = asciiLower(name);
  if (lower.startsWith('pragma_')) return `${name} is not allowed (table-valued pragma functions reveal the host)`;
  if (lower === 'sqlite_dbpage') return 'sqlite_dbpage is not allowed';
  return null;
}

export interface TextCheckOptions {
  /** Allow several statements (migrations, which then check each one again alone). */
  allowMany?: boolean;
}

/**
 * Layer (a): refuses by the tokens alone. Returns the statements found (one, unless `allowMany`).
 * String literals are data: `SELECT 'ATTACH'` passes; only a literal whose text would name a
 * refused table-valued function (`'pragma_…'`, `'sqlite_dbpage'`) is refused, since SQLite takes
 * a string literal for a table name in a FROM clause. Bind such a text as a parameter instead.
 */
export function checkSqlText(sql: string, options: TextCheckOptions = {}): SqlStatement[] {
  const tokens = tokenizeSql(sql);
  const statements = splitSqlStatements(sql, tokens);
  if (!options.allowMany && statements.length > 1) {
    throw Errors.sqlRefused(`more than one statement in one string (found ${statements.length})`);
  }
  for (const statement of statements) {
    let atStart = true;
    let first = true;
    for (const token of statement.tokens) {
      if (!significant(token)) continue;
      if (token.kind === 'semi') {
        atStart = true;
        continue;
      }
      if (atStart && token.kind === 'ident') {
        const refusal = REFUSED_STATEMENTS[token.value];
        if (refusal !== undefined && (first || REFUSED_INNER.has(token.value))) throw Errors.sqlRefused(refusal);
      }
      atStart = false;
      first = false;
      if (token.kind === 'ident' || token.kind === 'quoted') {
        const name = token.kind === 'ident' ? token.value : asciiLower(token.value);
        if (REFUSED_FUNCTIONS.has(name)) throw Errors.sqlRefused(`${name}() is not allowed`);
      }
      if (token.kind === 'ident' || token.kind === 'quoted' || token.kind === 'string') {
        const refusal = refusedName(token.kind === 'ident' ? token.text : token.value);
        if (refusal !== null) throw Errors.sqlRefused(refusal);
      }
    }
  }
  return statements;
}

// ------------------------------------------------------------------------------------------------
// Layer (b): SQLite's own compilation

const FUNCTION_OPCODES = new Set(['Function', 'PureFunc', 'AggStep', 'AggStep1', 'AggInverse', 'AggValue', 'AggFinal']);
const REFUSED_CALLS: ReadonlyArray<[RegExp, string]> = [
  [/^sqlite_attach\(/i, 'ATTACH is not allowed'],
  [/^sqlite_detach\(/i, 'DETACH is not allowed'],
  [/^load_extension\(/i, 'load_extension() is not allowed'],
  [/^fts3_tokenizer\(/i, 'fts3_tokenizer() is not allowed'],
];

interface ExplainRow {
  opcode: string;
  p4: unknown;
}

/**
 * Layer (b): compiles `EXPLAIN <sql>` (the program is listed, never run) and refuses by opcode.
 * Only call it on text that passed {@link checkSqlText} alone (one statement). Errors of SQLite
 * (syntax, unknown table) are thrown as they come.
 */
export function checkSqlProgram(db: Database.Database, sql: string): void {
  const explain = db.prepare(`EXPLAIN ${sql}`);
  explain.safeIntegers(false);
  for (const row of explain.all(...placeholderArguments(tokenizeSql(sql))) as ExplainRow[]) {
    switch (row.opcode) {
      case 'Vacuum':
        throw Errors.sqlRefused('VACUUM is not allowed');
      case 'AutoCommit':
      case 'Savepoint':
        throw Errors.sqlRefused('transaction control is not allowed');
    }
    if (FUNCTION_OPCODES.has(row.opcode) && typeof row.p4 === 'string') {
      for (const [pattern, refusal] of REFUSED_CALLS) if (pattern.test(row.p4)) throw Errors.sqlRefused(refusal);
    }
  }
}

/**
 * NULLs for every parameter of a statement, in the shape better-sqlite3 wants them (the listing of
 * a program does not depend on the values, but better-sqlite3 will not run it with any unbound).
 * Parameters are numbered as SQLite numbers them: `?` takes the next number, `?NNN` that number,
 * `:a` / `@a` / `$a` the number of its first use. Those with no name (`?`, gaps) are positional;
 * the others are looked up by name without its first character.
 */
export function placeholderArguments(tokens: readonly SqlToken[]): unknown[] {
  const names = new Map<number, string>();
  const numbers = new Map<string, number>();
  let count = 0;
  for (const token of tokens) {
    if (token.kind !== 'variable') continue;
    if (token.text === '?') {
      count++;
    } else if (token.text.startsWith('?')) {
      const n = Number(token.text.slice(1));
      if (!Number.isSafeInteger(n) || n < 1 || n > 32766) continue; // SQLite refuses it itself
      count = Math.max(count, n);
      if (!names.has(n)) {
        names.set(n, token.text);
        numbers.set(token.text, n);
      }
    } else if (!numbers.has(token.text)) {
      count++;
      names.set(count, token.text);
      numbers.set(token.text, count);
    }
  }
  const positional: unknown[] = [];
  for (let i = 1; i <= count; i++) if (!names.has(i)) positional.push(null);
  if (names.size === 0) return positional;
  return [...positional, Object.fromEntries([...names.values()].map((name) => [name.slice(1), null]))];
}
