import type pg from 'pg';
import { Errors } from '../../shared/errors.js';
import { LOCK_CLASS, MIGRATION_LOCK } from './pg-locks.js';

/** Anvil's own tables in the cluster's Postgres, in a schema of their own. */
export const SCHEMA = 'anvil_registry';

/** Migrations of the control plane's tables; the number applied is in `migrations`. Append only. */
const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE ${SCHEMA}.hosts (
    name TEXT PRIMARY KEY,
    kind TEXT NOT NULL CHECK (kind IN ('public', 'admin')),
    key  TEXT,
    env  TEXT,
    path TEXT,
    CHECK ((kind = 'admin' AND key IS NULL AND env IS NULL AND path IS NULL)
        OR (kind = 'public' AND key IS NOT NULL AND env IS NOT NULL))
  );
  CREATE TABLE ${SCHEMA}.apis (
    host       TEXT NOT NULL REFERENCES ${SCHEMA}.hosts(name),
    key        TEXT NOT NULL,
    release    TEXT NOT NULL,
    active     BOOLEAN NOT NULL,
    public     BOOLEAN NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (host, key)
  );
  -- The files of a release, packed, by the release digest (files + env): shared by equal releases.
  CREATE TABLE ${SCHEMA}.blobs (
    digest  TEXT PRIMARY KEY,
    archive BYTEA NOT NULL
  );
  CREATE TABLE ${SCHEMA}.releases (
    seq        BIGSERIAL PRIMARY KEY,
    host       TEXT NOT NULL,
    key        TEXT NOT NULL,
    release    TEXT NOT NULL,
    digest     TEXT NOT NULL REFERENCES ${SCHEMA}.blobs(digest),
    compiled   TEXT NOT NULL,
    created_at TEXT NOT NULL,
    UNIQUE (host, key, release),
    FOREIGN KEY (host, key) REFERENCES ${SCHEMA}.apis(host, key) ON DELETE CASCADE
  );
  -- One row: bumped by every write, in the same transaction; replicas compare it with theirs.
  CREATE TABLE ${SCHEMA}.state (
    id      INTEGER PRIMARY KEY CHECK (id = 1),
    version BIGINT NOT NULL
  );
  INSERT INTO ${SCHEMA}.state (id, version) VALUES (1, 0);
  `,
  // Placement of `database: sqlite` APIs on one owner instance (src/front/placement).
  `
  -- The instances of the cluster, each start a new id; alive while its heartbeat is younger than a lease.
  CREATE TABLE ${SCHEMA}.instances (
    id           TEXT PRIMARY KEY,
    internal_url TEXT NOT NULL,
    started_at   TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
    heartbeat_at TIMESTAMPTZ NOT NULL
  );
  -- The owner of each placed API: it alone serves the API until lease_until; a new owner bumps the epoch.
  CREATE TABLE ${SCHEMA}.placements (
    host        TEXT NOT NULL,
    key         TEXT NOT NULL,
    owner       TEXT NOT NULL,
    epoch       BIGINT NOT NULL,
    lease_until TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (host, key)
  );
  CREATE INDEX placements_owner ON ${SCHEMA}.placements (owner);
  -- One row: the secret that authenticates requests between instances (the internal port).
  CREATE TABLE ${SCHEMA}.cluster (
    id     INTEGER PRIMARY KEY CHECK (id = 1),
    secret TEXT NOT NULL
  );
  `,
];

/**
 * Applies the migrations the database lacks, under a session advisory lock: instances starting at
 * once wait for the first, then find nothing to do. Returns how many this call applied. Refuses a
 * database migrated by a newer Anvil.
 */
export async function migrateControlPlane(pool: pg.Pool, appliedBy: string): Promise<number> {
  const client = await pool.connect();
  let broken = false;
  try {
    await client.query('SELECT pg_advisory_lock($1, $2)', [LOCK_CLASS, MIGRATION_LOCK]);
    try {
      await client.query(`CREATE SCHEMA IF NOT EXISTS ${SCHEMA}`);
      await client.query(
        `CREATE TABLE IF NOT EXISTS ${SCHEMA}.migrations (version INTEGER PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now(), applied_by TEXT NOT NULL)`,
      );
      const { rows } = await client.query<{ n: number }>(
        `SELECT coalesce(max(version), 0)::int AS n FROM ${SCHEMA}.migrations`,
      );
      const have = rows[0]!.n;
      if (have > MIGRATIONS.length) throw Errors.controlPlaneSchema(have, MIGRATIONS.length);
      for (let v = have; v < MIGRATIONS.length; v++) {
        await client.query('BEGIN');
        try {
          await client.query(MIGRATIONS[v]!);
          await client.query(`INSERT INTO ${SCHEMA}.migrations (version, applied_by) VALUES ($1, $2)`, [
            v + 1,
            appliedBy,
          ]);
          await client.query('COMMIT');
        } catch (error) {
          await client.query('ROLLBACK').catch(() => undefined);
          throw error;
        }
      }
      return MIGRATIONS.length - have;
    } finally {
      await client
        .query('SELECT pg_advisory_unlock($1, $2)', [LOCK_CLASS, MIGRATION_LOCK])
        .catch(() => (broken = true));
    }
  } catch (error) {
    broken = true;
    throw error;
  } finally {
    client.release(broken);
  }
}
