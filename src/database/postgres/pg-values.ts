/**
 * Values between PostgreSQL and JSON data, as close to the SQLite mode as the types allow:
 * int8 a number when safe, else its decimal string (as SQLite's INTEGER); numeric and the
 * date/time types their text as PostgreSQL writes it; booleans true/false; json/jsonb parsed;
 * bytea a base64 string. Parameters bind as in SQLite mode: booleans, numbers and strings as they
 * are, lists and maps as their JSON text, bytes as bytea.
 */
import pg from 'pg';
import { Errors } from '../../errors.js';

const MIN_SAFE = BigInt(Number.MIN_SAFE_INTEGER);
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const INT8 = 20;
const AS_TEXT = new Set([1082 /* date */, 1083 /* time */, 1114 /* timestamp */, 1184 /* timestamptz */, 1266 /* timetz */, 1186 /* interval */]);

/** The type parsers of the API's pool (given per pool: pg's global table is left alone). */
export const pgTypes = {
  getTypeParser(oid: number, format?: 'text' | 'binary'): (value: string) => unknown {
    if (oid === INT8) return (text: string) => {
      const n = BigInt(text);
      return n >= MIN_SAFE && n <= MAX_SAFE ? Number(n) : text;
    };
    if (AS_TEXT.has(oid)) return (text: string) => text;
    return pg.types.getTypeParser(oid, format ?? 'text') as (value: string) => unknown;
  },
};

export type PgValue = null | number | string | boolean | Record<string, unknown> | unknown[];
export type PgRow = Record<string, PgValue>;

function fromPg(value: unknown): PgValue {
  if (value === null || value === undefined) return null;
  if (Buffer.isBuffer(value)) return value.toString('base64');
  if (value instanceof Date) return value.toISOString();
  if (typeof value === 'bigint') return value >= MIN_SAFE && value <= MAX_SAFE ? Number(value) : value.toString();
  return value as PgValue;
}

/** A row from an array of values; own properties only (a column may be named __proto__). */
export function pgRow(names: readonly string[], values: readonly unknown[]): PgRow {
  const row: PgRow = {};
  for (let i = 0; i < names.length; i++) {
    Object.defineProperty(row, names[i]!, { value: fromPg(values[i]), enumerable: true, writable: true, configurable: true });
  }
  return row;
}

export function toPg(value: unknown, where: string): unknown {
  if (value === null || value === undefined) return null;
  switch (typeof value) {
    case 'string':
    case 'number':
    case 'boolean':
      return value;
    case 'bigint':
      return value.toString();
    case 'object':
      if (Buffer.isBuffer(value)) return value;
      if (value instanceof Uint8Array) return Buffer.from(value);
      return JSON.stringify(value);
    default:
      throw Errors.sqlFailed(`parameter ${where} cannot be bound (${typeof value})`);
  }
}
