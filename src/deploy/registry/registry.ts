import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { Errors } from '../../shared/errors.js';
import { ApiRecords } from './api-records.js';
import { HostRecords } from './host-records.js';
import type { ApiRecord, DeleteApiResult, HostRecord, StoredRelease, UpdateApiResult } from './records.js';
import { replaceContents, type RegistryContents } from './replica-contents.js';
import { migrate } from './schema.js';
import { prepareStatements, type Statements } from './statements.js';

export type {
  AdminHost,
  ApiRecord,
  DeleteApiResult,
  HostRecord,
  PublicHost,
  StoredRelease,
  UpdateApiResult,
} from './records.js';
export { RegistryValidationError } from '../../shared/errors/anvil-error.js';
export type { RegistryContents } from './replica-contents.js';

/**
 * The registry: virtual hosts, API records and their releases, in one embedded SQLite file owned by
 * the router process. The CLI may open the same file; the router notices its writes through
 * `dataVersion()` and reloads. Hosts live in host-records.ts, APIs and releases in api-records.ts,
 * the tables in schema.ts.
 */

export interface RegistryOptions {
  /** Earlier releases kept besides the current one (SPEC §10). Default 7. */
  keep?: number;
  /** Clock for `created_at` / `updated_at`; tests inject one. */
  now?: () => Date;
}

export const DEFAULT_KEEP = 7;

export class Registry {
  readonly keep: number;
  private readonly db: Database.Database;
  private readonly stmt: Statements;
  private readonly hosts: HostRecords;
  private readonly apis: ApiRecords;

  static open(file: string, options: RegistryOptions = {}): Registry {
    if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
    const db = new Database(file, { timeout: 5000 });
    try {
      db.pragma('busy_timeout = 5000');
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = NORMAL');
      db.pragma('foreign_keys = ON');
      migrate(db);
      return new Registry(db, options);
    } catch (err) {
      db.close();
      throw err;
    }
  }

  private constructor(db: Database.Database, options: RegistryOptions) {
    const keep = options.keep ?? DEFAULT_KEEP;
    if (!Number.isInteger(keep) || keep < 0) throw Errors.registryInvalid('keep', 'must be an integer >= 0');
    this.keep = keep;
    this.db = db;
    this.stmt = prepareStatements(db);
    this.hosts = new HostRecords(db, this.stmt);
    this.apis = new ApiRecords(db, this.stmt, keep, options.now ?? (() => new Date()));
  }

  close(): void {
    if (this.db.open) this.db.close();
  }

  /** Changes when ANOTHER connection (e.g. the CLI) committed a write; this connection's own writes leave it as is. */
  dataVersion(): number {
    return this.stmt.dataVersion.get() ?? 0;
  }

  /** Cluster mode: this registry becomes a copy of the control plane's (replica-sync.ts). */
  replaceContents(contents: RegistryContents): void {
    replaceContents(this.db, contents);
  }

  // ---- hosts --------------------------------------------------------------------------------

  listHosts(): HostRecord[] {
    return this.hosts.listHosts();
  }

  /** Null for an unknown or malformed name (callers pass raw `Host` headers). */
  getHost(name: string): HostRecord | null {
    return this.hosts.getHost(name.toLowerCase());
  }

  addAdminHost(name: string): void {
    this.hosts.addAdminHost(name);
  }

  addPublicHost(h: { name: string; key: string; env: string; path?: string | null }): void {
    this.hosts.addPublicHost(h);
  }

  updatePublicHost(name: string, changes: { key?: string; env?: string; path?: string | null }): void {
    this.hosts.updatePublicHost(name, changes);
  }

  /** False when no such host. Throws while a public host still has APIs (their data would be orphaned). */
  removeHost(name: string): boolean {
    return this.hosts.removeHost(name.toLowerCase());
  }

  // ---- apis ---------------------------------------------------------------------------------

  listApiKeys(host: string): string[] {
    return this.apis.listApiKeys(host.toLowerCase());
  }

  getApi(host: string, key: string): ApiRecord | null {
    return this.apis.getApi(host.toLowerCase(), key);
  }

  /** Every API of every host, ordered by host then key (the router loads them at boot). */
  listApis(): Array<ApiRecord & { host: string }> {
    return this.apis.listApis();
  }

  getRelease(host: string, key: string, release: string): StoredRelease | null {
    return this.apis.getRelease(host.toLowerCase(), key, release);
  }

  /** Every stored release of an API (current and kept earlier ones), newest first. */
  listReleases(host: string, key: string): StoredRelease[] {
    return this.apis.listReleases(host.toLowerCase(), key);
  }

  currentDigest(host: string, key: string): string | null {
    return this.apis.currentDigest(host.toLowerCase(), key);
  }

  /**
   * Makes a new release current. First deploy: `active: true, public: false`; a redeploy keeps both
   * flags. Keeps at most `keep` earlier releases; the older ones are deleted and returned in
   * `pruned` (oldest first) so that the caller deletes their files.
   */
  recordRelease(host: string, key: string, release: string, digest: string): { record: ApiRecord; pruned: string[] } {
    return this.apis.recordRelease(host.toLowerCase(), key, release, digest);
  }

  /**
   * Sets the flags and the current release (rollback when it is an earlier one). The previous
   * current release becomes an earlier one; then earlier releases beyond `keep` are pruned by age.
   */
  updateApi(host: string, key: string, change: { active: boolean; release: string; public: boolean }): UpdateApiResult {
    return this.apis.updateApi(host.toLowerCase(), key, change);
  }

  /** Refuses (`active`) while the API is active (409); else removes the record and its release rows. */
  deleteApi(host: string, key: string): DeleteApiResult {
    return this.apis.deleteApi(host.toLowerCase(), key);
  }
}
