/**
 * The schema and login role of an API with `database: postgres`, made (or brought up to date) as
 * the DATABASE_URL user, idempotently, by whichever instance needs them first; serialised across
 * instances by an advisory lock of Anvil's own.
 *
 * The role: LOGIN, nothing else (no superuser, createdb, createrole, inherit, replication,
 * bypassrls), a connection limit, and as its defaults `search_path` (its schema only),
 * `statement_timeout`, `lock_timeout`, `idle_in_transaction_session_timeout` and, when the
 * DATABASE_URL user is a superuser (only one may set it), `temp_file_limit`. It owns its schema;
 * no other role gets any privilege on it. CONNECT on this database is granted to it, and revoked
 * from PUBLIC on every database (this one included) where the DATABASE_URL user may: an API role
 * then connects here only.
 *
 * The password is generated here and kept in Postgres (`anvil_pgdb.api_roles`, readable by the
 * DATABASE_URL user only), not in an instance's data dir: every instance of the cluster must log in
 * as the same role, and only Postgres is shared by all of them.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { apiSchemaName, lockKey, PRIVATE_SCHEMA } from './pg-names.js';
import { PG_API_SETTINGS, type ApiIdentity } from './pg-settings.js';

export interface ApiLogin {
  /** The schema, which is also the role's name. */
  schema: string;
  password: string;
}

/** The API's role and schema, made when missing; its login. */
export async function provisionApi(adminUrl: string, api: ApiIdentity): Promise<ApiLogin> {
  const client = new pg.Client({ connectionString: adminUrl, application_name: 'anvil-provision' });
  await client.connect();
  try {
    const database = (await client.query<{ db: string }>('SELECT current_database() AS db')).rows[0]!.db;
    // The database's name is in the hash: role names are global to the cluster, schemas are not.
    const schema = apiSchemaName(host(database, api), api.env, api.key);
    const known = await knownLogin(client, schema);
    if (known !== null) return known;
    const created = await createLogin(client, schema, database);
    await revokePublicConnect(client);
    return created;
  } finally {
    await client.end().catch(() => undefined);
  }
}

const host = (database: string, api: ApiIdentity) => `${database}\0${api.host}`;

/** The stored password of a role that exists, or null (first use, or something is missing). */
async function knownLogin(client: pg.Client, schema: string): Promise<ApiLogin | null> {
  try {
    const { rows } = await client.query<{ password: string }>(
      `SELECT r.password FROM ${PRIVATE_SCHEMA}.api_roles r JOIN pg_roles p ON p.rolname = r.role
        JOIN pg_namespace n ON n.nspname = r.role WHERE r.role = $1`,
      [schema],
    );
    return rows[0] === undefined ? null : { schema, password: rows[0].password };
  } catch (error) {
    if (isMissing(error)) return null;
    throw error;
  }
}

async function createLogin(client: pg.Client, schema: string, database: string): Promise<ApiLogin> {
  const role = client.escapeIdentifier(schema);
  const s = PG_API_SETTINGS;
  await client.query('BEGIN');
  try {
    await client.query('SELECT pg_advisory_xact_lock($1)', [lockKey('provision')]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${PRIVATE_SCHEMA}`);
    await client.query(`REVOKE ALL ON SCHEMA ${PRIVATE_SCHEMA} FROM PUBLIC`);
    await client.query(
      `CREATE TABLE IF NOT EXISTS ${PRIVATE_SCHEMA}.api_roles (role text PRIMARY KEY, password text NOT NULL, created_at timestamptz NOT NULL DEFAULT now())`,
    );
    await client.query(`REVOKE ALL ON ${PRIVATE_SCHEMA}.api_roles FROM PUBLIC`);
    const stored = await client.query<{ password: string }>(
      `SELECT password FROM ${PRIVATE_SCHEMA}.api_roles WHERE role = $1`,
      [schema],
    );
    const password = stored.rows[0]?.password ?? randomBytes(24).toString('base64url');
    if (stored.rows[0] === undefined)
      await client.query(`INSERT INTO ${PRIVATE_SCHEMA}.api_roles (role, password) VALUES ($1, $2)`, [
        schema,
        password,
      ]);
    const exists = (await client.query('SELECT 1 FROM pg_roles WHERE rolname = $1', [schema])).rowCount === 1;
    const attributes = `LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT NOREPLICATION NOBYPASSRLS CONNECTION LIMIT ${s.connectionLimit} PASSWORD ${client.escapeLiteral(password)}`;
    await client.query(`${exists ? 'ALTER' : 'CREATE'} ROLE ${role} ${exists ? 'WITH ' : ''}${attributes}`);
    await client.query(`ALTER ROLE ${role} SET search_path = ${role}`);
    await client.query(`ALTER ROLE ${role} SET statement_timeout = ${s.statementTimeoutMs}`);
    await client.query(`ALTER ROLE ${role} SET lock_timeout = ${s.lockTimeoutMs}`);
    await client.query(`ALTER ROLE ${role} SET idle_in_transaction_session_timeout = ${s.idleInTransactionMs}`);
    const superuser =
      (await client.query<{ s: boolean }>('SELECT rolsuper AS s FROM pg_roles WHERE rolname = current_user')).rows[0]
        ?.s === true;
    if (superuser)
      await client.query(`ALTER ROLE ${role} SET temp_file_limit = ${client.escapeLiteral(s.tempFileLimit)}`);
    // The DATABASE_URL user must be a member to give the role a schema (PostgreSQL 16 no longer implies it).
    if (!superuser) await client.query(`GRANT ${role} TO CURRENT_USER`);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${role} AUTHORIZATION ${role}`);
    await client.query(`REVOKE ALL ON SCHEMA ${role} FROM PUBLIC`);
    await client.query(`GRANT CONNECT, TEMPORARY ON DATABASE ${client.escapeIdentifier(database)} TO ${role}`);
    await client.query('COMMIT');
    return { schema, password };
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}

/**
 * CONNECT is PUBLIC's by default on every database: revoked where the DATABASE_URL user may (it
 * owns the database, or is a superuser), each alone (one refusal stops no other). Superusers and
 * owners keep connecting; a role that relied on PUBLIC's right needs a GRANT of its own.
 */
async function revokePublicConnect(client: pg.Client): Promise<void> {
  const { rows } = await client.query<{ datname: string }>(
    `SELECT datname FROM pg_database WHERE NOT datistemplate AND datallowconn
       AND (pg_has_role(datdba, 'USAGE') OR (SELECT rolsuper FROM pg_roles WHERE rolname = current_user))`,
  );
  for (const { datname } of rows) {
    await client
      .query(`REVOKE CONNECT ON DATABASE ${client.escapeIdentifier(datname)} FROM PUBLIC`)
      .catch(() => undefined);
  }
}

/** The bookkeeping table or schema does not exist yet (first API of the database). */
function isMissing(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === '42P01' || code === '3F000';
}
