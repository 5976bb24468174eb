import { hostname } from 'node:os';
import type pg from 'pg';
import { Errors } from '../../shared/errors.js';
import { checkEnv, checkHostKey, checkHostName, checkPath } from '../registry/record-checks.js';
import type { HostRecord } from '../registry/records.js';
import type { HostStore } from './host-store.js';
import { HOSTS_LOCK, LOCK_CLASS } from './pg-locks.js';
import { migrateControlPlane, SCHEMA } from './pg-schema.js';
import { inTransaction, openPool } from './pg-session.js';
import { bumpVersion } from './pg-writes.js';

/**
 * The hosts of the control plane (`anvil hosts` with DATABASE_URL): the same checks as the local
 * registry (record-checks.ts), each change one transaction under the hosts' lock that NOTIFYs the
 * running instances.
 */
export class PgHostStore implements HostStore {
  private constructor(private readonly pool: pg.Pool) {}

  static async open(url: string): Promise<PgHostStore> {
    const pool = openPool(url);
    try {
      await migrateControlPlane(pool, `${hostname()}:${process.pid} (cli)`);
      return new PgHostStore(pool);
    } catch (error) {
      await pool.end().catch(() => undefined);
      throw error;
    }
  }

  async listHosts(): Promise<HostRecord[]> {
    const { rows } = await this.pool.query<{
      name: string;
      kind: 'public' | 'admin';
      key: string | null;
      env: string | null;
      path: string | null;
    }>(`SELECT name, kind, key, env, path FROM ${SCHEMA}.hosts ORDER BY name`);
    return rows.map((r) =>
      r.kind === 'admin'
        ? { name: r.name, kind: 'admin' }
        : { name: r.name, kind: 'public', key: r.key ?? '', env: r.env ?? '', path: r.path },
    );
  }

  addAdminHost(name: string): Promise<void> {
    return this.insert(checkHostName(name), 'admin', null, null, null);
  }

  addPublicHost(h: { name: string; key: string; env: string; path: string | null }): Promise<void> {
    return this.insert(checkHostName(h.name), 'public', checkHostKey(h.key), checkEnv(h.env), checkPath(h.path));
  }

  removeHost(name: string): Promise<boolean> {
    const n = name.toLowerCase();
    return inTransaction(this.pool, async (db) => {
      await db.query('SELECT pg_advisory_xact_lock($1, $2)', [LOCK_CLASS, HOSTS_LOCK]);
      const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${SCHEMA}.apis WHERE host = $1`, [
        n,
      ]);
      if (rows[0]!.n > 0)
        throw Errors.registryInvalid('name', `host "${n}" still has ${rows[0]!.n} API(s); delete them first`);
      const removed = await db.query(`DELETE FROM ${SCHEMA}.hosts WHERE name = $1`, [n]);
      if (removed.rowCount === 0) return false;
      await bumpVersion(db);
      return true;
    });
  }

  async close(): Promise<void> {
    await this.pool.end();
  }

  private insert(
    name: string,
    kind: 'public' | 'admin',
    key: string | null,
    env: string | null,
    path: string | null,
  ): Promise<void> {
    return inTransaction(this.pool, async (db) => {
      await db.query('SELECT pg_advisory_xact_lock($1, $2)', [LOCK_CLASS, HOSTS_LOCK]);
      const added = await db.query(
        `INSERT INTO ${SCHEMA}.hosts (name, kind, key, env, path) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (name) DO NOTHING`,
        [name, kind, key, env, path],
      );
      if (added.rowCount === 0) throw Errors.registryInvalid('name', `host "${name}" already exists`);
      await bumpVersion(db);
    });
  }
}
