import type pg from 'pg';
import { Errors } from '../../shared/errors.js';
import type { DeleteApiResult, UpdateApiResult } from '../registry/records.js';
import type { ApiChange, NewRelease, RecordedRelease } from './control-plane.js';
import { API_LOCK_SQL, BLOBS_LOCK, LOCK_CLASS } from './pg-locks.js';
import { SCHEMA } from './pg-schema.js';

/** Every replica LISTENs here; the payload is the new version. */
export const CHANGE_CHANNEL = 'anvil_registry_changed';

/**
 * The control plane's writes, each inside a transaction the caller opened: the API's advisory lock
 * first (one write per API at a time, across instances), the blobs' lock if release files are
 * added or dropped, and the version bump last, which also NOTIFYs on commit. The same rules as the
 * local registry (api-records.ts): keep at most `keep` earlier releases, refuse deleting an active API.
 */
export class PgWrites {
  constructor(
    private readonly keep: number,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async recordRelease(db: pg.ClientBase, r: NewRelease): Promise<RecordedRelease> {
    if (r.shared === null) throw new Error('cluster deploy without the release files to share');
    await lockApi(db, r.host, r.key);
    const host = await db.query<{ kind: string }>(`SELECT kind FROM ${SCHEMA}.hosts WHERE name = $1`, [r.host]);
    if (host.rows[0]?.kind !== 'public') throw Errors.registryInvalid('host', `"${r.host}" is not a public host`);
    const current = await currentRow(db, r.host, r.key);
    if (r.reuseUnchanged && current !== null && current.digest === r.digest)
      return { release: current.release, created: false, pruned: [] };

    const now = this.now().toISOString();
    await db.query('SELECT pg_advisory_xact_lock($1, $2)', [LOCK_CLASS, BLOBS_LOCK]);
    await db.query(`INSERT INTO ${SCHEMA}.blobs (digest, archive) VALUES ($1, $2) ON CONFLICT (digest) DO NOTHING`, [
      r.digest,
      r.shared.archive,
    ]);
    if (current === null) {
      await db.query(
        `INSERT INTO ${SCHEMA}.apis (host, key, release, active, public, created_at, updated_at) VALUES ($1, $2, $3, true, false, $4, $4)`,
        [r.host, r.key, r.release, now],
      );
    } else {
      await db.query(`UPDATE ${SCHEMA}.apis SET release = $3, updated_at = $4 WHERE host = $1 AND key = $2`, [
        r.host,
        r.key,
        r.release,
        now,
      ]);
    }
    await db.query(
      `INSERT INTO ${SCHEMA}.releases (host, key, release, digest, compiled, created_at) VALUES ($1, $2, $3, $4, $5, $6)`,
      [r.host, r.key, r.release, r.digest, r.shared.compiled, now],
    );
    const pruned = await this.prune(db, r.host, r.key, r.release);
    await bumpVersion(db);
    return { release: r.release, created: true, pruned };
  }

  async updateApi(db: pg.ClientBase, host: string, key: string, change: ApiChange): Promise<UpdateApiResult> {
    await lockApi(db, host, key);
    const { rows } = await db.query<{ release: string; active: boolean; public: boolean }>(
      `SELECT release, active, public FROM ${SCHEMA}.apis WHERE host = $1 AND key = $2`,
      [host, key],
    );
    const row = rows[0];
    if (row === undefined) return 'unknown-api';
    const known = await db.query(`SELECT 1 FROM ${SCHEMA}.releases WHERE host = $1 AND key = $2 AND release = $3`, [
      host,
      key,
      change.release,
    ]);
    if (known.rowCount === 0) return 'unknown-release';
    if (row.release !== change.release || row.active !== change.active || row.public !== change.public) {
      await db.query(
        `UPDATE ${SCHEMA}.apis SET release = $3, active = $4, public = $5, updated_at = $6 WHERE host = $1 AND key = $2`,
        [host, key, change.release, change.active, change.public, this.now().toISOString()],
      );
    }
    await this.prune(db, host, key, change.release);
    await bumpVersion(db);
    return 'ok';
  }

  async deleteApi(db: pg.ClientBase, host: string, key: string): Promise<DeleteApiResult> {
    await lockApi(db, host, key);
    const { rows } = await db.query<{ release: string; active: boolean }>(
      `SELECT release, active FROM ${SCHEMA}.apis WHERE host = $1 AND key = $2`,
      [host, key],
    );
    const row = rows[0];
    if (row === undefined) return { status: 'unknown-api' };
    if (row.active) return { status: 'active' };
    const ids = await db.query<{ release: string; digest: string }>(
      `SELECT release, digest FROM ${SCHEMA}.releases WHERE host = $1 AND key = $2 ORDER BY seq DESC`,
      [host, key],
    );
    await db.query(`DELETE FROM ${SCHEMA}.apis WHERE host = $1 AND key = $2`, [host, key]);
    await dropUnusedBlobs(
      db,
      ids.rows.map((r) => r.digest),
    );
    await bumpVersion(db);
    return {
      status: 'ok',
      releases: [row.release, ...ids.rows.map((r) => r.release).filter((r) => r !== row.release)],
    };
  }

  /** Deletes earlier releases (all but `current`) beyond `keep`, by age; returns them oldest first. */
  private async prune(db: pg.ClientBase, host: string, key: string, current: string): Promise<string[]> {
    const { rows } = await db.query<{ release: string; digest: string }>(
      `SELECT release, digest FROM ${SCHEMA}.releases WHERE host = $1 AND key = $2 AND release <> $3 ORDER BY seq DESC`,
      [host, key, current],
    );
    const doomed = rows.slice(this.keep).reverse();
    if (doomed.length === 0) return [];
    await db.query(`DELETE FROM ${SCHEMA}.releases WHERE host = $1 AND key = $2 AND release = ANY($3::text[])`, [
      host,
      key,
      doomed.map((r) => r.release),
    ]);
    await dropUnusedBlobs(
      db,
      doomed.map((r) => r.digest),
    );
    return doomed.map((r) => r.release);
  }
}

/** Serialises the writes of one API across every instance, until the transaction ends. */
async function lockApi(db: pg.ClientBase, host: string, key: string): Promise<void> {
  await db.query(API_LOCK_SQL, [`${host}/${key}`]);
}

async function currentRow(
  db: pg.ClientBase,
  host: string,
  key: string,
): Promise<{ release: string; digest: string } | null> {
  const { rows } = await db.query<{ release: string; digest: string }>(
    `SELECT a.release, r.digest FROM ${SCHEMA}.apis a JOIN ${SCHEMA}.releases r ON r.host = a.host AND r.key = a.key AND r.release = a.release
     WHERE a.host = $1 AND a.key = $2`,
    [host, key],
  );
  return rows[0] ?? null;
}

/** Under the blobs' lock (a deploy adding the same digest waits, then sees the release that uses it). */
async function dropUnusedBlobs(db: pg.ClientBase, digests: string[]): Promise<void> {
  if (digests.length === 0) return;
  await db.query('SELECT pg_advisory_xact_lock($1, $2)', [LOCK_CLASS, BLOBS_LOCK]);
  await db.query(
    `DELETE FROM ${SCHEMA}.blobs b WHERE b.digest = ANY($1::text[]) AND NOT EXISTS (SELECT 1 FROM ${SCHEMA}.releases r WHERE r.digest = b.digest)`,
    [digests],
  );
}

/** The last statement of every write: the row lock on `state` orders the versions as the commits. */
export async function bumpVersion(db: pg.ClientBase): Promise<number> {
  const { rows } = await db.query<{ version: string }>(
    `UPDATE ${SCHEMA}.state SET version = version + 1 WHERE id = 1 RETURNING version`,
  );
  const version = Number(rows[0]!.version);
  await db.query('SELECT pg_notify($1, $2)', [CHANGE_CHANNEL, String(version)]);
  return version;
}
