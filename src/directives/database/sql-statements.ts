/**
 * The statements of an SQL text, split where SQLite's own sqlite3_complete() (complete.c) would
 * end them.
 */
import { significant, tokenizeSql, type SqlToken } from './sql-tokens.js';

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
