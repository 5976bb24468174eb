import type pg from 'pg';
import type { RegistryContents } from '../registry/registry.js';
import { inTransaction } from './pg-session.js';
import { SCHEMA } from './pg-schema.js';

export interface VersionedContents {
  version: number;
  contents: RegistryContents;
}

/** The whole registry and its version, from one snapshot (release files and compiled.json left out). */
export function readContents(pool: pg.Pool): Promise<VersionedContents> {
  return inTransaction(
    pool,
    async (db) => {
      const state = await db.query<{ version: string }>(`SELECT version FROM ${SCHEMA}.state WHERE id = 1`);
      const hosts = await db.query(`SELECT name, kind, key, env, path FROM ${SCHEMA}.hosts ORDER BY name`);
      const apis = await db.query(
        `SELECT host, key, release, active::int AS active, public::int AS public, created_at, updated_at FROM ${SCHEMA}.apis ORDER BY host, key`,
      );
      const releases = await db.query(
        `SELECT seq::int AS seq, host, key, release, digest, created_at FROM ${SCHEMA}.releases ORDER BY seq`,
      );
      return {
        version: Number(state.rows[0]!.version),
        contents: { hosts: hosts.rows, apis: apis.rows, releases: releases.rows } as RegistryContents,
      };
    },
    'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY',
  );
}

export async function readVersion(pool: pg.Pool): Promise<number> {
  const { rows } = await pool.query<{ version: string }>(`SELECT version FROM ${SCHEMA}.state WHERE id = 1`);
  return Number(rows[0]!.version);
}

/** What a replica needs to put a release in its cache: the packed files and the compiled.json text. */
export async function readReleaseFiles(
  pool: pg.Pool,
  host: string,
  key: string,
  release: string,
): Promise<{ digest: string; compiled: string; archive: Buffer } | null> {
  const { rows } = await pool.query<{ digest: string; compiled: string; archive: Buffer }>(
    `SELECT r.digest, r.compiled, b.archive FROM ${SCHEMA}.releases r JOIN ${SCHEMA}.blobs b ON b.digest = r.digest
     WHERE r.host = $1 AND r.key = $2 AND r.release = $3`,
    [host, key, release],
  );
  return rows[0] ?? null;
}
