/**
 * Values between SQLite and JSON data (see api-database.ts for the mapping): what a row gives back,
 * and how parameters are bound.
 */
import { Errors } from '../../shared/errors.js';

export type SqlValue = null | number | string;
export type Row = Record<string, SqlValue>;
type Bindable = null | number | bigint | string | Buffer;

const MIN_SAFE = BigInt(Number.MIN_SAFE_INTEGER);
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** A value from SQLite as JSON data (see the file comment). */
export function fromSqlite(value: unknown): SqlValue {
  if (value === null || value === undefined) return null;
  if (typeof value === 'bigint') {
    return value >= MIN_SAFE && value <= MAX_SAFE ? Number(value) : value.toString();
  }
  if (typeof value === 'number' || typeof value === 'string') return value;
  if (Buffer.isBuffer(value)) return value.toString('base64');
  return String(value);
}

function toSqlite(value: unknown, where: string): Bindable {
  if (value === null || value === undefined) return null;
  switch (typeof value) {
    case 'string':
    case 'bigint':
    case 'number':
      return value;
    case 'boolean':
      return value ? 1 : 0;
    case 'object':
      if (Buffer.isBuffer(value)) return value;
      if (value instanceof Uint8Array) return Buffer.from(value);
      return JSON.stringify(value);
    default:
      throw Errors.sqlFailed(`parameter ${where} cannot be bound (${typeof value})`);
  }
}

/** The arguments for better-sqlite3: positional values, or one object of named values. */
export function bindArguments(params: unknown): Bindable[] | [Record<string, Bindable>] {
  if (params === undefined || params === null) return [];
  if (Array.isArray(params)) return params.map((value, i) => toSqlite(value, `[${i}]`));
  if (typeof params === 'object' && !Buffer.isBuffer(params) && !(params instanceof Uint8Array)) {
    const named: Record<string, Bindable> = Object.create(null) as Record<string, Bindable>;
    for (const [key, value] of Object.entries(params)) named[key.replace(/^[:@$?]/, '')] = toSqlite(value, `"${key}"`);
    return [named];
  }
  throw Errors.sqlFailed('params must be a list or a map');
}

/** A row from raw values and column names; own properties only (a column may be named __proto__). */
export function toRow(names: readonly string[], values: readonly unknown[]): Row {
  const row: Row = {};
  for (let i = 0; i < names.length; i++) {
    const name = names[i]!;
    // An assignment to __proto__ would set the row's prototype instead of a column.
    if (name === '__proto__')
      Object.defineProperty(row, name, {
        value: fromSqlite(values[i]),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    else row[name] = fromSqlite(values[i]);
  }
  return row;
}
