/**
 * Which SQL a tenant may run against its own database (SECURITY.md: an API must reach no data but
 * its own, load no code and learn nothing of the host).
 *
 * Two layers, both always applied, the first one first:
 *  (a) a lexical check on SQLite's own tokens (string literals, quoted identifiers and comments
 *      skipped exactly as SQLite skips them): one statement per string; no ATTACH, DETACH, VACUUM,
 *      PRAGMA, EXPLAIN or transaction control as a statement; no `pragma_*` table-valued function,
 *      no `sqlite_dbpage`, no `load_extension()` / `fts3_tokenizer()` under any spelling.
 *      It must run before anything is prepared: SQLite carries out some PRAGMAs while it *compiles*
 *      them, so even `EXPLAIN PRAGMA …` would have an effect.
 *  (b) the statement compiled by SQLite itself (`EXPLAIN <sql>`, never stepped): refused when its
 *      program has a `Vacuum`, `AutoCommit` or `Savepoint` opcode, or calls one of the functions
 *      `sqlite_attach`, `sqlite_detach`, `load_extension`, `fts3_tokenizer`.
 *
 * A refusal is `Errors.sqlRefused` (ANVIL_ERR_SQL_REFUSED, status 500), whose message names what was refused.
 */
import type Database from 'better-sqlite3';
import { AnvilError, Errors } from '../errors.js';

// ------------------------------------------------------------------------------------------------
// Tokenizer (after SQLite's tokenize.c and complete.c)

export type SqlTokenKind =
  | 'space' // whitespace
  | 'comment' // -- … or /* … */
  | 'string' // '…' (value: the content, '' unescaped)
  | 'blob' // x'…'
  | 'ident' // a bare word: keyword or identifier
  | 'quoted' // "…", […], `…` (value: the identifier)
  | 'variable' // ?, ?NNN, :name, @name, $name, #name
  | 'number'
  | 'semi' // ;
  | 'punct'; // any other operator or character

export interface SqlToken {
  kind: SqlTokenKind;
  /** The token as written. */
  text: string;
  /** `string` and `quoted`: the content with doubled quotes undone; `ident`: lower-cased (ASCII). */
  value: string;
  start: number;
  end: number;
}

const isSpace = (c: number) => c === 0x20 || (c >= 0x09 && c <= 0x0d); // \v too: SQLite skips it after a space
const isDigit = (c: number) => c >= 0x30 && c <= 0x39;
const isAlpha = (c: number) => (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
/** SQLite: letters, `_` and every byte >= 0x80 start an identifier. */
const isIdStart = (c: number) => isAlpha(c) || c === 0x5f || c >= 0x80;
/** SQLite's IdChar: those, digits and `$`. */
const isIdChar = (c: number) => isIdStart(c) || isDigit(c) || c === 0x24;

/** Lower case for ASCII letters only: SQLite folds nothing else. */
export function asciiLower(text: string): string {
  return text.replace(/[A-Z]/g, (c) => String.fromCharCode(c.charCodeAt(0) + 32));
}

/**
 * Splits SQL text into tokens as SQLite does. Throws a refusal for what SQLite could not read the
 * same way twice: a NUL character (SQLite stops reading there), an unterminated string literal or
 * quoted identifier.
 */
export function tokenizeSql(sql: string): SqlToken[] {
  const tokens: SqlToken[] = [];
  const n = sql.length;
  let i = 0;
  const push = (kind: SqlTokenKind, start: number, end: number, value?: string) => {
    const text = sql.slice(start, end);
    tokens.push({ kind, text, value: value ?? (kind === 'ident' ? asciiLower(text) : text), start, end });
  };
  /** A run quoted by `close` in which a doubled `close` stands for itself; returns the end and the content. */
  const quoted = (start: number, close: string, doubling: boolean, what: string): [number, string] => {
    let j = start + 1;
    let content = '';
    for (;;) {
      const k = sql.indexOf(close, j);
      if (k < 0) throw Errors.sqlRefused(`unterminated ${what}`);
      content += sql.slice(j, k);
      if (doubling && sql[k + 1] === close) {
        content += close;
        j = k + 2;
        continue;
      }
      return [k + 1, content];
    }
  };

  while (i < n) {
    const c = sql.charCodeAt(i);
    const start = i;
    if (c === 0) throw Errors.sqlRefused('a NUL character in SQL text');
    if (isSpace(c)) {
      while (i < n && isSpace(sql.charCodeAt(i))) i++;
      push('space', start, i);
    } else if (c === 0x2d /* - */ && sql.charCodeAt(i + 1) === 0x2d) {
      const k = sql.indexOf('\n', i);
      i = k < 0 ? n : k + 1;
      push('comment', start, i);
    } else if (c === 0x2f /* / */ && sql.charCodeAt(i + 1) === 0x2a /* * */) {
      // Not nested; an unterminated comment runs to the end of the text (as in SQLite).
      const k = sql.indexOf('*/', i + 2);
      i = k < 0 ? n : k + 2;
      push('comment', start, i);
    } else if (c === 0x27 /* ' */) {
      const [end, content] = quoted(i, "'", true, 'string literal');
      i = end;
      push('string', start, i, content);
    } else if (c === 0x22 /* " */ || c === 0x60 /* ` */) {
      const [end, content] = quoted(i, sql[i]!, true, 'quoted identifier');
      i = end;
      push('quoted', start, i, content);
    } else if (c === 0x5b /* [ */) {
      const [end, content] = quoted(i, ']', false, 'bracketed identifier');
      i = end;
      push('quoted', start, i, content);
    } else if ((c === 0x78 || c === 0x58) /* x X */ && sql.charCodeAt(i + 1) === 0x27) {
      const k = sql.indexOf("'", i + 2);
      if (k < 0) throw Errors.sqlRefused('unterminated blob literal');
      i = k + 1;
      push('blob', start, i);
    } else if (isIdStart(c)) {
      while (i < n && isIdChar(sql.charCodeAt(i))) i++;
      push('ident', start, i);
    } else if (isDigit(c) || (c === 0x2e /* . */ && isDigit(sql.charCodeAt(i + 1)))) {
      // As SQLite reads a number: hex, or digits, a fraction, an exponent. Identifier characters
      // right after it make one illegal token for SQLite: they are swallowed here too.
      const at = (k: number) => sql.charCodeAt(k);
      const isHex = (d: number) => isDigit(d) || (d >= 0x41 && d <= 0x46) || (d >= 0x61 && d <= 0x66);
      if (c === 0x30 && (at(i + 1) === 0x78 || at(i + 1) === 0x58) && isHex(at(i + 2))) {
        i += 3;
        while (i < n && (isHex(at(i)) || at(i) === 0x5f)) i++;
      } else {
        while (i < n && (isDigit(at(i)) || at(i) === 0x5f)) i++;
        if (at(i) === 0x2e) {
          i++;
          while (i < n && (isDigit(at(i)) || at(i) === 0x5f)) i++;
        }
        if ((at(i) === 0x65 || at(i) === 0x45) && (isDigit(at(i + 1)) || ((at(i + 1) === 0x2b || at(i + 1) === 0x2d) && isDigit(at(i + 2))))) {
          i += 2;
          while (i < n && (isDigit(at(i)) || at(i) === 0x5f)) i++;
        }
      }
      while (i < n && isIdChar(at(i))) i++;
      push('number', start, i);
    } else if (c === 0x3f /* ? */) {
      i++;
      while (i < n && isDigit(sql.charCodeAt(i))) i++;
      push('variable', start, i);
    } else if (c === 0x3a || c === 0x40 || c === 0x24 || c === 0x23 /* : @ $ # */) {
      i++;
      while (i < n && isIdChar(sql.charCodeAt(i))) i++;
      push('variable', start, i);
    } else if (c === 0x3b /* ; */) {
      i++;
      push('semi', start, i);
    } else {
      // One UTF-16 unit at a time; surrogate pairs are >= 0x80 and taken as identifier characters above.
      i++;
      push('punct', start, i);
    }
  }
  return tokens;
}

const significant = (t: SqlToken) => t.kind !== 'space' && t.kind !== 'comment';

/** One statement of a text: its tokens (a statement's own `;` excluded) and its source range. */
export interface SqlStatement {
  text: string;
  tokens: SqlToken[];
  start: number;
  end: number;
}

// sqlite3_complete()'s state machine: a `;` ends a statement unless it is inside the body of a
// CREATE [TEMP] TRIGGER, which ends at `END ;`.
const Tk = { Semi: 0, Ws: 1, Other: 2, Explain: 3, Create: 4, Temp: 5, Trigger: 6, End: 7 } as const;
type Tk = (typeof Tk)[keyof typeof Tk];
const TRANSITIONS: readonly (readonly number[])[] = [
  /*              SEMI WS OTHER EXPLAIN CREATE TEMP TRIGGER END */
  /* 0 INVALID */ [1, 0, 2, 3, 4, 2, 2, 2],
  /* 1 START   */ [1, 1, 2, 3, 4, 2, 2, 2],
  /* 2 NORMAL  */ [1, 2, 2, 2, 2, 2, 2, 2],
  /* 3 EXPLAIN */ [1, 3, 3, 2, 4, 2, 2, 2],
  /* 4 CREATE  */ [1, 4, 2, 2, 2, 4, 5, 2],
  /* 5 TRIGGER */ [6, 5, 5, 5, 5, 5, 5, 5],
  /* 6 SEMI    */ [6, 6, 5, 5, 5, 5, 5, 7],
  /* 7 END     */ [1, 7, 5, 5, 5, 5, 5, 5],
];

function tokenClass(t: SqlToken): Tk {
  switch (t.kind) {
    case 'semi':
      return Tk.Semi;
    case 'space':
    case 'comment':
      return Tk.Ws;
    case 'ident':
      switch (t.value) {
        case 'explain':
          return Tk.Explain;
        case 'create':
          return Tk.Create;
        case 'temp':
        case 'temporary':
          return Tk.Temp;
        case 'trigger':
          return Tk.Trigger;
        case 'end':
          return Tk.End;
        default:
          return Tk.Other;
      }
    default:
      return Tk.Other;
  }
}

/**
 * The statements of a text, split on top-level `;` as SQLite's own sqlite3_complete() does
 * (semicolons inside literals, quoted names, comments and trigger bodies do not split). Statements
 * made only of whitespace and comments are left out.
 */
export function splitSqlStatements(sql: string, tokens: SqlToken[] = tokenizeSql(sql)): SqlStatement[] {
  const statements: SqlStatement[] = [];
  let state = 0;
  let current: SqlToken[] = [];
  let start = 0;
  const flush = (end: number) => {
    const first = current.find(significant);
    if (first !== undefined) {
      const last = current.filter(significant).at(-1)!;
      statements.push({ text: sql.slice(start, end), tokens: current, start: first.start, end: last.end });
    }
    current = [];
  };
  for (const token of tokens) {
    state = TRANSITIONS[state]![tokenClass(token)]!;
    if (token.kind === 'semi' && state === 1) {
      flush(token.start);
      start = token.end;
    } else {
      current.push(token);
    }
  }
  flush(sql.length);
  return statements;
}

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

// ------------------------------------------------------------------------------------------------

/**
 * A map that forgets its least recently used entries beyond `maxEntries`, or beyond `maxChars` of
 * keys in all (keys are SQL texts a tenant chooses: their total size is bounded, not only their number).
 */
export class SqlLru<V> {
  private readonly map = new Map<string, V>();
  private chars = 0;

  constructor(
    readonly maxEntries: number,
    readonly maxChars: number,
  ) {}

  get size(): number {
    return this.map.size;
  }

  get(key: string): V | undefined {
    const value = this.map.get(key);
    if (value !== undefined) {
      this.map.delete(key);
      this.map.set(key, value);
    }
    return value;
  }

  set(key: string, value: V): void {
    if (this.map.has(key)) this.delete(key);
    if (key.length > this.maxChars) return;
    this.map.set(key, value);
    this.chars += key.length;
    while (this.map.size > this.maxEntries || this.chars > this.maxChars) this.delete(this.map.keys().next().value!);
  }

  delete(key: string): void {
    if (this.map.delete(key)) this.chars -= key.length;
  }

  clear(): void {
    this.map.clear();
    this.chars = 0;
  }
}

/**
 * The policy of one database connection: both layers, with the verdict remembered per SQL string
 * (LRU). Only verdicts are kept: a statement SQLite could not compile (say, its table does not
 * exist yet) is checked again next time.
 */
export class SqlPolicy {
  private readonly verdicts: SqlLru<AnvilError | true>;

  constructor(
    private readonly db: Database.Database,
    cache: { maxEntries: number; maxChars: number } = { maxEntries: 1000, maxChars: 2 * 1024 * 1024 },
  ) {
    this.verdicts = new SqlLru(cache.maxEntries, cache.maxChars);
  }

  /** Throws the refusal (or SQLite's error) when `sql` may not run; one statement only. */
  check(sql: string): void {
    const cached = this.verdicts.get(sql);
    if (cached !== undefined) {
      if (cached !== true) throw cached;
      return;
    }
    let verdict: AnvilError | true = true;
    try {
      checkSqlText(sql);
      checkSqlProgram(this.db, sql);
    } catch (error) {
      if (!(error instanceof AnvilError) || error.code !== Errors.sqlRefused.code) throw error;
      verdict = error;
    }
    this.verdicts.set(sql, verdict);
    if (verdict !== true) throw verdict;
  }

  /** Both layers, nothing remembered (migrations: each statement is seen once). */
  checkOnce(sql: string): void {
    checkSqlText(sql);
    checkSqlProgram(this.db, sql);
  }
}
