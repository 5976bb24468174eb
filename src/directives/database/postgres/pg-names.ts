/**
 * The PostgreSQL names of an API with `database: postgres`: one schema and one login role of the
 * same name per public host, env and API key (as the SQLite file is per `<host>/<env>/<key>`).
 */
import { createHash } from 'node:crypto';

/** Every API schema (and role) starts with it; the SQL policy refuses names of any other but the API's own. */
export const API_SCHEMA_PREFIX = 'anvil_api_';
/** Anvil's own bookkeeping (the roles' passwords): owned by the DATABASE_URL user, no API role may use it. */
export const PRIVATE_SCHEMA = 'anvil_pgdb';

/**
 * `anvil_api_<key>_<hash>`: the key (`-` as `_`, cut to fit 63 bytes) for people reading the
 * catalogs, and 12 hex digits of a hash of host, env and key to keep apart what the cut or the
 * `-`/`_` swap would merge. Only `[a-z0-9_]`: never needs quoting.
 */
export function apiSchemaName(host: string, env: string, key: string): string {
  const hash = createHash('sha256').update(`${host}\0${env}\0${key}`).digest('hex').slice(0, 12);
  const readable = key.replace(/[^a-z0-9]/g, '_').slice(0, 63 - API_SCHEMA_PREFIX.length - hash.length - 1);
  return `${API_SCHEMA_PREFIX}${readable}_${hash}`;
}

/** A number for pg_advisory_xact_lock, from a name (Anvil's own locks: tenants may take none). */
export function lockKey(name: string): string {
  return BigInt.asIntN(
    64,
    BigInt(`0x${createHash('sha256').update(`anvil-pgdb\0${name}`).digest('hex').slice(0, 16)}`),
  ).toString();
}
