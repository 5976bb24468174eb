/**
 * Parameters in PostgreSQL mode as in SQLite mode: a list binds `?` in order (translated to `$1`,
 * `$2`, … outside literals, quoted names and comments; `$n` written as such binds the n-th value),
 * a map binds `:name` (keys with or without the `:`). The tokens are the policy's (sql-tokens.ts).
 */
import { Errors } from '../../../shared/errors.js';
import type { SqlToken } from '../sql-tokens.js';
import { toPg } from './pg-values.js';

export interface BoundStatement {
  text: string;
  values: unknown[];
}

export function bindPostgres(sql: string, tokens: readonly SqlToken[], params: unknown): BoundStatement {
  const variables = tokens.filter((t) => t.kind === 'variable');
  const named = params !== null && typeof params === 'object' && !Array.isArray(params) && !Buffer.isBuffer(params);
  if (params !== null && params !== undefined && !Array.isArray(params) && !named)
    throw Errors.sqlFailed('params must be a list or a map');
  const list = Array.isArray(params) ? params : [];
  const map = named
    ? new Map(Object.entries(params as Record<string, unknown>).map(([k, v]) => [k.replace(/^:/, ''), v]))
    : null;

  const values: unknown[] = [];
  const numbers = new Map<string, number>();
  let text = '';
  let from = 0;
  let positional = 0;
  for (const token of variables) {
    let replacement: string;
    if (token.text === '?') {
      if (map !== null) throw Errors.sqlFailed('? parameters take a list of values, not a map');
      if (positional >= list.length)
        throw Errors.sqlFailed(`the statement has more ? than the ${list.length} values given`);
      values.push(toPg(list[positional], `[${positional}]`));
      positional++;
      replacement = `$${values.length}`;
    } else if (token.text.startsWith('$')) {
      if (map !== null) throw Errors.sqlFailed(`${token.text} takes a list of values, not a map`);
      const n = Number(token.text.slice(1));
      if (n < 1 || n > list.length) throw Errors.sqlFailed(`${token.text}: only ${list.length} values given`);
      replacement = `$\u0000${n}`; // renumbered below, once the ? are counted
    } else {
      const name = token.text.slice(1);
      if (map === null) throw Errors.sqlFailed(`${token.text} takes a map of values`);
      if (!map.has(name)) throw Errors.sqlFailed(`no value given for ${token.text}`);
      let n = numbers.get(name);
      if (n === undefined) {
        values.push(toPg(map.get(name), `"${name}"`));
        n = values.length;
        numbers.set(name, n);
      }
      replacement = `$${n}`;
    }
    text += sql.slice(from, token.start) + replacement;
    from = token.end;
  }
  text += sql.slice(from);
  if (!text.includes('$\u0000')) return { text, values };
  // `$n` written in the text: the list itself, after the values the ? took (none, usually).
  const offset = values.length;
  list.forEach((value, i) => values.push(toPg(value, `[${i}]`)));
  // eslint-disable-next-line no-control-regex -- NUL marks a placeholder: no SQL text holds one.
  return { text: text.replace(/\$\u0000(\d+)/g, (_m, n: string) => `$${Number(n) + offset}`), values };
}
