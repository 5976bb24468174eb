import type Database from 'better-sqlite3';
import { Errors } from '../../shared/errors.js';
import { checkApiKey } from './record-checks.js';
import type { ApiRecord, DeleteApiResult, StoredRelease, UpdateApiResult } from './records.js';
import { isReleaseId } from './release-id.js';
import type { ApiRow, Statements } from './statements.js';

/**
 * The API records of the public hosts and their releases: the current one and at most `keep`
 * earlier ones. Host names come in lower case (the Registry lowers them).
 */
export class ApiRecords {
  private readonly txRecordRelease;
  private readonly txUpdateApi;
  private readonly txDeleteApi;
  private readonly txGetApi;
  private readonly txListApis;

  constructor(
    db: Database.Database,
    private readonly stmt: Statements,
    private readonly keep: number,
    private readonly now: () => Date,
  ) {
    this.txRecordRelease = db.transaction((host: string, key: string, release: string, digest: string) => {
      const h = this.stmt.getHost.get(host);
      if (!h || h.kind !== 'public') throw Errors.registryInvalid('host', `"${host}" is not a public host`);
      const now = this.now().toISOString();
      const existing = this.stmt.getApiRow.get(host, key);
      if (existing) {
        if (this.stmt.getRelease.get(host, key, release)) {
          throw Errors.registryInvalid('release', `"${release}" already exists for ${host}/${key}`);
        }
        this.stmt.setCurrent.run(release, now, host, key);
      } else {
        this.stmt.insertApi.run(host, key, release, now, now);
      }
      this.stmt.insertRelease.run(host, key, release, digest, now);
      const pruned = this.prune(host, key, release);
      return { record: this.toApi(this.stmt.getApiRow.get(host, key)!), pruned };
    });

    this.txUpdateApi = db.transaction(
      (host: string, key: string, change: { active: boolean; release: string; public: boolean }): UpdateApiResult => {
        const row = this.stmt.getApiRow.get(host, key);
        if (!row) return 'unknown-api';
        if (!this.stmt.getRelease.get(host, key, change.release)) return 'unknown-release';
        const active = change.active ? 1 : 0;
        const pub = change.public ? 1 : 0;
        if (row.release !== change.release || row.active !== active || row.public !== pub) {
          this.stmt.updateApi.run(change.release, active, pub, this.now().toISOString(), host, key);
        }
        this.prune(host, key, change.release);
        return 'ok';
      },
    );

    this.txDeleteApi = db.transaction((host: string, key: string): DeleteApiResult => {
      const row = this.stmt.getApiRow.get(host, key);
      if (!row) return { status: 'unknown-api' };
      if (row.active) return { status: 'active' };
      const releases = [row.release, ...this.stmt.releaseIds.all(host, key).filter((r) => r !== row.release)];
      this.stmt.deleteReleases.run(host, key);
      this.stmt.deleteApi.run(host, key);
      return { status: 'ok', releases };
    });

    // Reads of several statements run in one (deferred) transaction: one consistent snapshot.
    this.txGetApi = db.transaction((host: string, key: string): ApiRecord | null => {
      const row = this.stmt.getApiRow.get(host, key);
      return row ? this.toApi(row) : null;
    });
    this.txListApis = db.transaction((): Array<ApiRecord & { host: string }> =>
      this.stmt.listApiRows.all().map((row) => ({ host: row.host, ...this.toApi(row) })),
    );
  }

  listApiKeys(host: string): string[] {
    return this.stmt.listApiKeys.all(host);
  }

  getApi(host: string, key: string): ApiRecord | null {
    return this.txGetApi(host, key);
  }

  listApis(): Array<ApiRecord & { host: string }> {
    return this.txListApis();
  }

  getRelease(host: string, key: string, release: string): StoredRelease | null {
    return this.stmt.getRelease.get(host, key, release) ?? null;
  }

  listReleases(host: string, key: string): StoredRelease[] {
    return this.stmt.listReleases.all(host, key);
  }

  currentDigest(host: string, key: string): string | null {
    return this.stmt.currentDigest.get(host, key) ?? null;
  }

  recordRelease(host: string, key: string, release: string, digest: string): { record: ApiRecord; pruned: string[] } {
    checkApiKey(key);
    if (!isReleaseId(release)) throw Errors.registryInvalid('release', `"${release}" is not a release id`);
    if (typeof digest !== 'string' || digest.length === 0)
      throw Errors.registryInvalid('digest', 'must be a non-empty string');
    return this.txRecordRelease.immediate(host, key, release, digest);
  }

  updateApi(host: string, key: string, change: { active: boolean; release: string; public: boolean }): UpdateApiResult {
    return this.txUpdateApi.immediate(host, key, change);
  }

  deleteApi(host: string, key: string): DeleteApiResult {
    return this.txDeleteApi.immediate(host, key);
  }

  /** Deletes earlier releases (all but `current`) beyond `keep`, by age; returns them oldest first. Inside a transaction. */
  private prune(host: string, key: string, current: string): string[] {
    const earlier = this.stmt.releaseIds.all(host, key).filter((r) => r !== current);
    const doomed = earlier.slice(this.keep).reverse();
    for (const r of doomed) this.stmt.deleteRelease.run(host, key, r);
    return doomed;
  }

  private toApi(row: ApiRow): ApiRecord {
    return {
      key: row.key,
      release: row.release,
      active: row.active === 1,
      public: row.public === 1,
      releases: this.stmt.releaseIds.all(row.host, row.key).filter((r) => r !== row.release),
      created_at: row.created_at,
      updated_at: row.updated_at,
    };
  }
}
