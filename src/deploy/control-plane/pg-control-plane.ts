import { hostname } from 'node:os';
import type pg from 'pg';
import type { DataPaths } from '../api-yaml/data-paths.js';
import { AnvilError, Errors } from '../../shared/errors.js';
import type { InstanceLog } from '../../shared/logs/instance-log.js';
import type { DefaultHostsResult } from '../registry/default-hosts.js';
import type { DeleteApiResult, UpdateApiResult } from '../registry/records.js';
import { DEFAULT_KEEP, type Registry } from '../registry/registry.js';
import type { ApiChange, ControlPlane, NewRelease, RecordedRelease } from './control-plane.js';
import { ensureClusterDefaultHosts } from './pg-default-hosts.js';
import { migrateControlPlane } from './pg-schema.js';
import { inTransaction, openPool } from './pg-session.js';
import { PgWrites } from './pg-writes.js';
import { ReplicaSync } from './replica-sync.js';

export interface ClusterStart {
  url: string;
  registry: Registry;
  paths: DataPaths;
  log: InstanceLog;
  defaults: { env: string; envExplicit: boolean; keyFromEnv: string | undefined };
}

/**
 * Cluster mode: Postgres is the source of truth. Each write is one transaction (pg-writes.ts) that
 * ends in a NOTIFY; it resolves once this instance's replica shows it, so the management API
 * answers with the change already served here. Other instances follow within a notice (or a poll).
 */
export class PgControlPlane implements ControlPlane {
  readonly sharesReleaseFiles = true;
  private readonly writes = new PgWrites(DEFAULT_KEEP);

  private constructor(
    private readonly pool: pg.Pool,
    readonly sync: ReplicaSync,
    private readonly log: InstanceLog,
  ) {}

  /** Migrates (once, under a lock), ensures the default hosts, and makes the local registry a replica. */
  static async start(options: ClusterStart): Promise<{ controlPlane: PgControlPlane; hosts: DefaultHostsResult }> {
    const pool = openPool(options.url);
    try {
      await migrateControlPlane(pool, `${hostname()}:${process.pid}`);
      const hosts = await inTransaction(pool, (db) => ensureClusterDefaultHosts(db, options.paths, options.defaults));
      const sync = new ReplicaSync(pool, options.url, options.registry, options.paths, options.log);
      await sync.start();
      return { controlPlane: new PgControlPlane(pool, sync, options.log), hosts };
    } catch (error) {
      await pool.end().catch(() => undefined);
      if (error instanceof AnvilError) throw error;
      throw Errors.controlPlaneStart(shownUrl(options.url), error instanceof Error ? error.message : String(error));
    }
  }

  async recordRelease(release: NewRelease): Promise<RecordedRelease> {
    const recorded = await inTransaction(this.pool, (db) => this.writes.recordRelease(db, release));
    await this.applied();
    return recorded;
  }

  async updateApi(host: string, key: string, change: ApiChange): Promise<UpdateApiResult> {
    const outcome = await inTransaction(this.pool, (db) => this.writes.updateApi(db, host, key, change));
    if (outcome === 'ok') await this.applied();
    return outcome;
  }

  async deleteApi(host: string, key: string): Promise<DeleteApiResult> {
    const outcome = await inTransaction(this.pool, (db) => this.writes.deleteApi(db, host, key));
    if (outcome.status === 'ok') await this.applied();
    return outcome;
  }

  /** Committed: this replica copies it before the write is answered (if Postgres went away meanwhile, the poll will). */
  private async applied(): Promise<void> {
    await this.sync
      .syncNow()
      .catch((error: unknown) =>
        this.log.warn(
          { err: error },
          'control plane: a committed write is not in the local replica yet; the next poll copies it',
        ),
      );
  }

  async close(): Promise<void> {
    await this.sync.close();
    await this.pool.end().catch(() => undefined);
  }
}

/** The URL without its password, for messages. */
function shownUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(not a URL)';
  }
}
