import { describe, expect, it } from 'vitest';
import { bindPostgres } from '../../src/directives/database/postgres/pg-params.js';
import { tokenizeSql } from '../../src/directives/database/sql-tokens.js';

const bind = (sql: string, params?: unknown) => bindPostgres(sql, tokenizeSql(sql, 'postgres'), params);

describe('? parameters in PostgreSQL mode', () => {
  it('numbers each ? in order, outside string literals, quoted names and comments', () => {
    expect(bind(`select ? as "a?", '?' as b, x::int -- what?\n from t where c = ? /* ? */`, ['one', 2])).toEqual({
      text: `select $1 as "a?", '?' as b, x::int -- what?\n from t where c = $2 /* ? */`,
      values: ['one', 2],
    });
  });

  it('binds :name from a map (once per name), keeps casts, and $n as written', () => {
    expect(bind('select :a::text, :b, :a', { a: 'x', ':b': true })).toEqual({
      text: 'select $1::text, $2, $1',
      values: ['x', true],
    });
    expect(bind('select $2, $1', ['a', 'b'])).toEqual({ text: 'select $2, $1', values: ['a', 'b'] });
  });

  it('binds values as SQLite mode does: lists and maps as JSON text, bytes as bytes', () => {
    expect(bind('select ?, ?, ?', [[1, 2], { k: 'v' }, null]).values).toEqual(['[1,2]', '{"k":"v"}', null]);
    expect(bind('select ?', [Buffer.from('hi')]).values[0]).toEqual(Buffer.from('hi'));
  });

  it('says what is wrong with the parameters', () => {
    expect(() => bind('select ?, ?', [1])).toThrow(/more \? than the 1 values given/);
    expect(() => bind('select :a', {})).toThrow(/no value given for :a/);
    expect(() => bind('select ?', { a: 1 })).toThrow(/take a list of values, not a map/);
    expect(() => bind('select :a', [1])).toThrow(/takes a map of values/);
  });
});
