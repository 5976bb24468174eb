/**
 * How the helper thread's pool reads PostgreSQL's values (pg-values.ts says what they become). Apart
 * from pg-values.ts so that actor threads, which bind parameters but never talk to PostgreSQL, do
 * not load the `pg` driver.
 */
import pg from 'pg';
import { MAX_SAFE, MIN_SAFE } from './pg-values.js';

const INT8 = 20;
const AS_TEXT = new Set([
  1082 /* date */, 1083 /* time */, 1114 /* timestamp */, 1184 /* timestamptz */, 1266 /* timetz */,
  1186 /* interval */,
]);

/** The type parsers of the API's pool (given per pool: pg's global table is left alone). */
export const pgTypes = {
  getTypeParser(oid: number, format?: 'text' | 'binary'): (value: string) => unknown {
    if (oid === INT8)
      return (text: string) => {
        const n = BigInt(text);
        return n >= MIN_SAFE && n <= MAX_SAFE ? Number(n) : text;
      };
    if (AS_TEXT.has(oid)) return (text: string) => text;
    return pg.types.getTypeParser(oid, format ?? 'text') as (value: string) => unknown;
  },
};
