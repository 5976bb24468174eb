import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { isReleaseId } from './release-id.js';

/**
 * The registry: virtual hosts, API records and their releases, in one embedded SQLite file owned by
 * the router process. The CLI may open the same file; the router notices its writes through
 * `dataVersion()` and reloads.
 */

export interface PublicHost { name: string; kind: 'public'; key: string; env: string; path: string | null }
export interface AdminHost { name: string; kind: 'admin' }
export type HostRecord = PublicHost | AdminHost;

/** Exactly the JSON of `GET /anvil/api/<key>`. `releases`: the kept earlier releases, newest first. */
export interface ApiRecord {
  key: string;
  release: string;
  active: boolean;
  public: boolean;
  releases: string[];
  created_at: string;
  updated_at: string;
}

export interface StoredRelease { host: string; key: string; release: string; digest: string; created_at: string }

export type UpdateApiResult = 'ok' | 'unknown-api' | 'unknown-release';

/** `releases`: every release id the API had (current first, then newest to oldest), for deleting files. */
export type DeleteApiResult =
  | { status: 'ok'; releases: string[] }
  | { status: 'unknown-api' }
  | { status: 'active' };

export interface RegistryOptions {
  /** Earlier releases kept besides the current one (SPEC §10). Default 7. */
  keep?: number;
  /** Clock for `created_at` / `updated_at`; tests inject one. */
  now?: () => Date;
}

/** A rejected argument; `field` names it (`name`, `key`, `env`, `path`, `release`, `digest`). */
export class RegistryValidationError extends Error {
  readonly field: string;
  constructor(field: string, message: string) {
    super(`${field}: ${message}`);
    this.name = 'RegistryValidationError';
    this.field = field;
  }
}

export const DEFAULT_KEEP = 7;

const HOST_LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
const ENV = /^[a-z0-9][a-z0-9_-]{0,31}$/;
const API_KEY = /^[a-z0-9][a-z0-9-]{0,62}$/;
const PLATFORM_SEGMENT = 'anvil';
/** Sent in a header: printable ASCII, no spaces. */
const HOST_KEY = /^[\x21-\x7e]{16,512}$/;

/** Schema migrations; `PRAGMA user_version` = number applied. Append only. */
const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE hosts (
    name TEXT PRIMARY KEY,
    kind TEXT NOT NULL CHECK (kind IN ('public', 'admin')),
    key  TEXT,
    env  TEXT,
    path TEXT,
    CHECK ((kind = 'admin' AND key IS NULL AND env IS NULL AND path IS NULL)
        OR (kind = 'public' AND key IS NOT NULL AND env IS NOT NULL))
  ) WITHOUT ROWID;
  CREATE TABLE apis (
    host       TEXT NOT NULL REFERENCES hosts(name),
    key        TEXT NOT NULL,
    release    TEXT NOT NULL,
    active     INTEGER NOT NULL CHECK (active IN (0, 1)),
    public     INTEGER NOT NULL CHECK (public IN (0, 1)),
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (host, key)
  ) WITHOUT ROWID;
  -- seq = recording order across every connection: the "age" used for ordering and pruning.
  CREATE TABLE releases (
    seq        INTEGER PRIMARY KEY AUTOINCREMENT,
    host       TEXT NOT NULL,
    key        TEXT NOT NULL,
    release    TEXT NOT NULL,
    digest     TEXT NOT NULL,
    created_at TEXT NOT NULL,
    UNIQUE (host, key, release),
    FOREIGN KEY (host, key) REFERENCES apis(host, key) ON DELETE CASCADE
  );
  `,
];

interface HostRow { name: string; kind: 'public' | 'admin'; key: string | null; env: string | null; path: string | null }
interface ApiRow { host: string; key: string; release: string; active: number; public: number; created_at: string; updated_at: string }

export class Registry {
  readonly keep: number;
  private readonly db: Database.Database;
  private readonly now: () => Date;
  private readonly stmt;
  private readonly txRecordRelease;
  private readonly txUpdateApi;
  private readonly txDeleteApi;
  private readonly txRemoveHost;
  private readonly txGetApi;
  private readonly txListApis;

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
    if (!Number.isInteger(keep) || keep < 0) throw new RegistryValidationError('keep', 'must be an integer >= 0');
    this.keep = keep;
    this.db = db;
    this.now = options.now ?? (() => new Date());

    this.stmt = {
      listHosts: db.prepare<[], HostRow>('SELECT name, kind, key, env, path FROM hosts ORDER BY name'),
      getHost: db.prepare<[string], HostRow>('SELECT name, kind, key, env, path FROM hosts WHERE name = ?'),
      insertHost: db.prepare<[string, string, string | null, string | null, string | null]>(
        'INSERT INTO hosts (name, kind, key, env, path) VALUES (?, ?, ?, ?, ?)',
      ),
      updateHost: db.prepare<[string, string, string | null, string]>(
        "UPDATE hosts SET key = ?, env = ?, path = ? WHERE name = ? AND kind = 'public'",
      ),
      deleteHost: db.prepare<[string]>('DELETE FROM hosts WHERE name = ?'),
      countApisOfHost: db.prepare<[string], number>('SELECT count(*) FROM apis WHERE host = ?').pluck(),

      listApiKeys: db.prepare<[string], string>('SELECT key FROM apis WHERE host = ? ORDER BY key').pluck(),
      listApiRows: db.prepare<[], ApiRow>('SELECT * FROM apis ORDER BY host, key'),
      getApiRow: db.prepare<[string, string], ApiRow>('SELECT * FROM apis WHERE host = ? AND key = ?'),
      insertApi: db.prepare<[string, string, string, string, string]>(
        'INSERT INTO apis (host, key, release, active, public, created_at, updated_at) VALUES (?, ?, ?, 1, 0, ?, ?)',
      ),
      setCurrent: db.prepare<[string, string, string, string]>(
        'UPDATE apis SET release = ?, updated_at = ? WHERE host = ? AND key = ?',
      ),
      updateApi: db.prepare<[string, number, number, string, string, string]>(
        'UPDATE apis SET release = ?, active = ?, public = ?, updated_at = ? WHERE host = ? AND key = ?',
      ),
      deleteApi: db.prepare<[string, string]>('DELETE FROM apis WHERE host = ? AND key = ?'),

      /** Every stored release id of an API, newest first. */
      releaseIds: db.prepare<[string, string], string>(
        'SELECT release FROM releases WHERE host = ? AND key = ? ORDER BY seq DESC',
      ).pluck(),
      getRelease: db.prepare<[string, string, string], StoredRelease>(
        'SELECT host, key, release, digest, created_at FROM releases WHERE host = ? AND key = ? AND release = ?',
      ),
      listReleases: db.prepare<[string, string], StoredRelease>(
        'SELECT host, key, release, digest, created_at FROM releases WHERE host = ? AND key = ? ORDER BY seq DESC',
      ),
      insertRelease: db.prepare<[string, string, string, string, string]>(
        'INSERT INTO releases (host, key, release, digest, created_at) VALUES (?, ?, ?, ?, ?)',
      ),
      deleteRelease: db.prepare<[string, string, string]>('DELETE FROM releases WHERE host = ? AND key = ? AND release = ?'),
      deleteReleases: db.prepare<[string, string]>('DELETE FROM releases WHERE host = ? AND key = ?'),
      currentDigest: db.prepare<[string, string], string>(
        `SELECT r.digest FROM apis a JOIN releases r ON r.host = a.host AND r.key = a.key AND r.release = a.release
         WHERE a.host = ? AND a.key = ?`,
      ).pluck(),

      dataVersion: db.prepare<[], number>('PRAGMA data_version').pluck(),
    };

    this.txRecordRelease = db.transaction((host: string, key: string, release: string, digest: string) => {
      const h = this.stmt.getHost.get(host);
      if (!h || h.kind !== 'public') throw new RegistryValidationError('host', `"${host}" is not a public host`);
      const now = this.now().toISOString();
      const existing = this.stmt.getApiRow.get(host, key);
      if (existing) {
        if (this.stmt.getRelease.get(host, key, release)) {
          throw new RegistryValidationError('release', `"${release}" already exists for ${host}/${key}`);
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

    this.txRemoveHost = db.transaction((name: string): boolean => {
      const apis = this.stmt.countApisOfHost.get(name) ?? 0;
      if (apis > 0) {
        throw new RegistryValidationError('name', `host "${name}" still has ${apis} API(s); delete them first`);
      }
      return this.stmt.deleteHost.run(name).changes > 0;
    });
  }

  close(): void {
    if (this.db.open) this.db.close();
  }

  /** Changes when ANOTHER connection (e.g. the CLI) committed a write; this connection's own writes leave it as is. */
  dataVersion(): number {
    return this.stmt.dataVersion.get() ?? 0;
  }

  // ---- hosts --------------------------------------------------------------------------------

  listHosts(): HostRecord[] {
    return this.stmt.listHosts.all().map(toHost);
  }

  /** Null for an unknown or malformed name (callers pass raw `Host` headers). */
  getHost(name: string): HostRecord | null {
    const row = this.stmt.getHost.get(name.toLowerCase());
    return row ? toHost(row) : null;
  }

  addAdminHost(name: string): void {
    const n = checkHostName(name);
    this.insertHost(n, 'admin', null, null, null);
  }

  addPublicHost(h: { name: string; key: string; env: string; path?: string | null }): void {
    const n = checkHostName(h.name);
    this.insertHost(n, 'public', checkHostKey(h.key), checkEnv(h.env), checkPath(h.path ?? null));
  }

  updatePublicHost(name: string, changes: { key?: string; env?: string; path?: string | null }): void {
    const n = checkHostName(name);
    const row = this.stmt.getHost.get(n);
    if (!row || row.kind !== 'public') throw new RegistryValidationError('name', `"${n}" is not a public host`);
    const key = changes.key === undefined ? row.key : checkHostKey(changes.key);
    const env = changes.env === undefined ? row.env : checkEnv(changes.env);
    const path = changes.path === undefined ? row.path : checkPath(changes.path);
    this.stmt.updateHost.run(key ?? '', env ?? '', path, n);
  }

  /** False when no such host. Throws while a public host still has APIs (their data would be orphaned). */
  removeHost(name: string): boolean {
    return this.txRemoveHost(name.toLowerCase());
  }

  // ---- apis ---------------------------------------------------------------------------------

  listApiKeys(host: string): string[] {
    return this.stmt.listApiKeys.all(host.toLowerCase());
  }

  getApi(host: string, key: string): ApiRecord | null {
    return this.txGetApi(host.toLowerCase(), key);
  }

  /** Every API of every host, ordered by host then key (the router loads them at boot). */
  listApis(): Array<ApiRecord & { host: string }> {
    return this.txListApis();
  }

  getRelease(host: string, key: string, release: string): StoredRelease | null {
    return this.stmt.getRelease.get(host.toLowerCase(), key, release) ?? null;
  }

  /** Every stored release of an API (current and kept earlier ones), newest first. */
  listReleases(host: string, key: string): StoredRelease[] {
    return this.stmt.listReleases.all(host.toLowerCase(), key);
  }

  currentDigest(host: string, key: string): string | null {
    return this.stmt.currentDigest.get(host.toLowerCase(), key) ?? null;
  }

  /**
   * Makes a new release current. First deploy: `active: true, public: false`; a redeploy keeps both
   * flags. Keeps at most `keep` earlier releases; the older ones are deleted and returned in
   * `pruned` (oldest first) so that the caller deletes their files.
   */
  recordRelease(host: string, key: string, release: string, digest: string): { record: ApiRecord; pruned: string[] } {
    const h = host.toLowerCase();
    checkApiKey(key);
    if (!isReleaseId(release)) throw new RegistryValidationError('release', `"${release}" is not a release id`);
    if (typeof digest !== 'string' || digest.length === 0) throw new RegistryValidationError('digest', 'must be a non-empty string');
    return this.txRecordRelease.immediate(h, key, release, digest);
  }

  /**
   * Sets the flags and the current release (rollback when it is an earlier one). The previous
   * current release becomes an earlier one; then earlier releases beyond `keep` are pruned by age.
   */
  updateApi(host: string, key: string, change: { active: boolean; release: string; public: boolean }): UpdateApiResult {
    return this.txUpdateApi.immediate(host.toLowerCase(), key, change);
  }

  /** Refuses (`active`) while the API is active (409); else removes the record and its release rows. */
  deleteApi(host: string, key: string): DeleteApiResult {
    return this.txDeleteApi.immediate(host.toLowerCase(), key);
  }

  // ---- internals ----------------------------------------------------------------------------

  private insertHost(name: string, kind: 'public' | 'admin', key: string | null, env: string | null, path: string | null) {
    try {
      this.stmt.insertHost.run(name, kind, key, env, path);
    } catch (err) {
      if ((err as { code?: string }).code === 'SQLITE_CONSTRAINT_PRIMARYKEY') {
        throw new RegistryValidationError('name', `host "${name}" already exists`);
      }
      throw err;
    }
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

function migrate(db: Database.Database): void {
  const version = () => db.pragma('user_version', { simple: true }) as number;
  if (version() >= MIGRATIONS.length) {
    if (version() > MIGRATIONS.length) {
      throw new Error(`registry: schema version ${version()} is newer than this Anvil (${MIGRATIONS.length})`);
    }
    return;
  }
  // IMMEDIATE: a second process opening the same file at the same time waits, then sees the new version.
  db.transaction(() => {
    for (let v = version(); v < MIGRATIONS.length; v++) {
      db.exec(MIGRATIONS[v]!);
      db.pragma(`user_version = ${v + 1}`);
    }
  }).immediate();
}

function toHost(row: HostRow): HostRecord {
  if (row.kind === 'admin') return { name: row.name, kind: 'admin' };
  return { name: row.name, kind: 'public', key: row.key ?? '', env: row.env ?? '', path: row.path };
}

function checkHostName(name: unknown): string {
  if (typeof name !== 'string') throw new RegistryValidationError('name', 'must be a string');
  const n = name.toLowerCase();
  if (n.length === 0 || n.length > 253 || !n.split('.').every((label) => HOST_LABEL.test(label))) {
    throw new RegistryValidationError(
      'name',
      `"${name}" is not a valid host name (letters, digits, dots and hyphens; labels of 1-63 characters not starting or ending with a hyphen; at most 253 characters; no port)`,
    );
  }
  return n;
}

function checkHostKey(key: unknown): string {
  if (typeof key !== 'string' || !HOST_KEY.test(key)) {
    throw new RegistryValidationError('key', 'must be 16 to 512 printable ASCII characters without spaces');
  }
  return key;
}

function checkEnv(env: unknown): string {
  if (typeof env !== 'string' || !ENV.test(env)) {
    throw new RegistryValidationError('env', `${JSON.stringify(env)} must match ${ENV.source}`);
  }
  return env;
}

function checkApiKey(key: unknown): string {
  if (typeof key !== 'string' || !API_KEY.test(key) || key === PLATFORM_SEGMENT) {
    throw new RegistryValidationError('key', `${JSON.stringify(key)} is not a valid API key (${API_KEY.source}, not "${PLATFORM_SEGMENT}")`);
  }
  return key;
}

function checkPath(path: unknown): string | null {
  if (path === null) return null;
  if (typeof path !== 'string' || !path.startsWith('/')) {
    throw new RegistryValidationError('path', 'must be null or "/<api-key>"');
  }
  try {
    checkApiKey(path.slice(1));
  } catch {
    throw new RegistryValidationError('path', `${JSON.stringify(path)} must be null or "/<api-key>" with a valid API key`);
  }
  return path;
}
