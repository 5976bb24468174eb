/**
 * Migrations of an API with `database: postgres`: the same files as in SQLite mode
 * (migration-files.ts), run as the API's role in its schema, each file once and in its own
 * transaction, recorded in the schema's `_anvil_migrations`. Instances and threads that start at
 * once take turns on an advisory lock of Anvil's own: a file is applied once in the cluster.
 */
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type pg from 'pg';
import { DATABASE_LIMITS } from '../database-limits.js';
import { migrationFiles, migrationFolder } from '../migration-files.js';
import type { PgFailure } from './pg-failure.js';
import { lockKey } from './pg-names.js';
import { checkPostgresSql } from './pg-policy.js';

const TABLE = '_anvil_migrations';

/** Applies the pending files of `releaseDir`; throws a PgFailure naming the file that failed. */
export async function migratePostgres(pool: pg.Pool, schema: string, releaseDir: string): Promise<string[]> {
  const folder = migrationFolder(releaseDir);
  if (folder === null) return [];
  let names: string[];
  try {
    names = migrationFiles(folder.path);
  } catch (error) {
    throw { kind: 'migrationsUnreadable', args: [folder.label, problem(error)] } satisfies PgFailure;
  }
  const applied: string[] = [];
  for (const name of names) {
    const label = `${folder.label}/${name}`;
    const sql = await readMigration(join(folder.path, name), label);
    if (await applyOne(pool, schema, name, label, sql)) applied.push(name);
  }
  return applied;
}

async function readMigration(path: string, label: string): Promise<string> {
  try {
    if ((await stat(path)).size > DATABASE_LIMITS.maxMigrationBytes)
      throw new Error(`larger than ${DATABASE_LIMITS.maxMigrationBytes} bytes`);
    return (await readFile(path, 'utf8')).replace(/^\uFEFF/, '');
  } catch (error) {
    throw {
      kind: 'migrationFailed',
      args: [label, error instanceof Error && !('code' in error) ? error.message : problem(error)],
    } satisfies PgFailure;
  }
}

async function applyOne(pool: pg.Pool, schema: string, name: string, label: string, sql: string): Promise<boolean> {
  const client = await pool.connect();
  let broken = false;
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock($1)', [lockKey(`migrate:${schema}`)]);
    await client.query({
      text: `CREATE TABLE IF NOT EXISTS ${TABLE} (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`,
      values: [],
    });
    const done =
      (await client.query({ text: `SELECT 1 FROM ${TABLE} WHERE name = $1`, values: [name] })).rowCount === 1;
    if (!done) {
      // Each statement alone, through the extended protocol: PostgreSQL runs exactly one per call.
      for (const statement of checkPostgresSql(sql, { schema, allowMany: true }))
        await client.query({ text: statement.text, values: [] });
      await client.query({ text: `INSERT INTO ${TABLE} (name) VALUES ($1)`, values: [name] });
    }
    await client.query('COMMIT');
    return !done;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {
      broken = true;
    });
    throw {
      kind: 'migrationFailed',
      args: [label, error instanceof Error ? error.message : String(error)],
    } satisfies PgFailure;
  } finally {
    client.release(broken);
  }
}

function problem(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? `cannot read it (${code})` : 'cannot read it';
}
