/**
 * SQL text split into tokens as SQLite reads it (after SQLite's tokenize.c): string literals,
 * quoted identifiers and comments are skipped exactly as SQLite skips them. The ground of the SQL
 * policy's lexical check (sql-policy.ts).
 */
import { Errors } from '../../shared/errors.js';

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
 * Whose reading to follow. `postgres` differs where a difference could hide code from the policy:
 * `[` and backquotes are operators, not quotes; block comments nest; `::` is a cast, not a
 * parameter; `E'…'` strings (backslash escapes), `U&…` escapes and `$tag$…$tag$` strings are refused, as the
 * policy would have to read them exactly as PostgreSQL does (a bound parameter does the same job).
 */
export type SqlDialect = 'sqlite' | 'postgres';

/**
 * Splits SQL text into tokens as SQLite (or PostgreSQL, see SqlDialect) does. Throws a refusal for
 * what could not be read the same way twice: a NUL character (SQLite stops reading there), an
 * unterminated string literal or quoted identifier.
 */
export function tokenizeSql(sql: string, dialect: SqlDialect = 'sqlite'): SqlToken[] {
  const postgres = dialect === 'postgres';
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
    } else if (postgres && c === 0x2f /* / */ && sql.charCodeAt(i + 1) === 0x2a /* * */) {
      i = nestedCommentEnd(sql, i);
      push('comment', start, i);
    } else if (postgres && (c === 0x65 || c === 0x45) /* e E */ && sql.charCodeAt(i + 1) === 0x27) {
      throw Errors.sqlRefused("E'…' strings (backslash escapes) are not allowed: bind the value as a parameter");
    } else if (
      postgres &&
      (c === 0x75 || c === 0x55) /* u U */ &&
      sql.charCodeAt(i + 1) === 0x26 /* & */ &&
      (sql[i + 2] === "'" || sql[i + 2] === '"')
    ) {
      // U&"\0073et_config" names set_config: escapes in names and strings would hide them from the policy.
      throw Errors.sqlRefused('U&… Unicode escapes are not allowed: write the characters themselves');
    } else if (postgres && c === 0x24 /* $ */ && !isDigit(sql.charCodeAt(i + 1))) {
      throw Errors.sqlRefused('dollar-quoted strings ($$…$$) are not allowed: bind the value as a parameter');
    } else if (postgres && c === 0x3a /* : */ && sql.charCodeAt(i + 1) === 0x3a) {
      i += 2;
      push('punct', start, i);
    } else if (postgres && (c === 0x5b || c === 0x5d || c === 0x60) /* [ ] ` */) {
      i++;
      push('punct', start, i);
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
        if (
          (at(i) === 0x65 || at(i) === 0x45) &&
          (isDigit(at(i + 1)) || ((at(i + 1) === 0x2b || at(i + 1) === 0x2d) && isDigit(at(i + 2))))
        ) {
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

/** PostgreSQL's block comments nest; an unterminated one runs to the end of the text (PostgreSQL then refuses it). */
function nestedCommentEnd(sql: string, start: number): number {
  let depth = 0;
  let i = start;
  while (i < sql.length) {
    if (sql.startsWith('/*', i)) {
      depth++;
      i += 2;
    } else if (sql.startsWith('*/', i)) {
      depth--;
      i += 2;
      if (depth === 0) return i;
    } else {
      i++;
    }
  }
  return sql.length;
}

/** Whether a token counts (neither whitespace nor a comment). */
export const significant = (t: SqlToken) => t.kind !== 'space' && t.kind !== 'comment';
