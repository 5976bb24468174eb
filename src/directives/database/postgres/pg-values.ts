/**
 * Values between PostgreSQL and JSON data, as close to the SQLite mode as the types allow:
 * int8 a number when safe, else its decimal string (as SQLite's INTEGER); numeric and the
 * date/time types their text as PostgreSQL writes it; booleans true/false; json/jsonb parsed;
 * bytea a base64 string. Parameters bind as in SQLite mode: booleans, numbers and strings as they
 * are, lists and maps as their JSON text, bytes as bytea.
 */
import { Errors } from '../../../shared/errors.js';

export const MIN_SAFE = BigInt(Number.MIN_SAFE_INTEGER);
export const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

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
    Object.defineProperty(row, names[i]!, {
      value: fromPg(values[i]),
      enumerable: true,
      writable: true,
      configurable: true,
    });
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
