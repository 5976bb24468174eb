import type Database from 'better-sqlite3';
import type { StoredRelease } from './records.js';

/** Rows as SQLite returns them (see schema.ts). */
export interface HostRow {
  name: string;
  kind: 'public' | 'admin';
  key: string | null;
  env: string | null;
  path: string | null;
}
export interface ApiRow {
  host: string;
  key: string;
  release: string;
  active: number;
  public: number;
  created_at: string;
  updated_at: string;
}

export type Statements = ReturnType<typeof prepareStatements>;

/** Every statement of the registry, prepared once per connection. */
export function prepareStatements(db: Database.Database) {
  return {
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
    releaseIds: db
      .prepare<[string, string], string>('SELECT release FROM releases WHERE host = ? AND key = ? ORDER BY seq DESC')
      .pluck(),
    getRelease: db.prepare<[string, string, string], StoredRelease>(
      'SELECT host, key, release, digest, created_at FROM releases WHERE host = ? AND key = ? AND release = ?',
    ),
    listReleases: db.prepare<[string, string], StoredRelease>(
      'SELECT host, key, release, digest, created_at FROM releases WHERE host = ? AND key = ? ORDER BY seq DESC',
    ),
    insertRelease: db.prepare<[string, string, string, string, string]>(
      'INSERT INTO releases (host, key, release, digest, created_at) VALUES (?, ?, ?, ?, ?)',
    ),
    deleteRelease: db.prepare<[string, string, string]>(
      'DELETE FROM releases WHERE host = ? AND key = ? AND release = ?',
    ),
    deleteReleases: db.prepare<[string, string]>('DELETE FROM releases WHERE host = ? AND key = ?'),
    currentDigest: db
      .prepare<[string, string], string>(
        `SELECT r.digest FROM apis a JOIN releases r ON r.host = a.host AND r.key = a.key AND r.release = a.release
       WHERE a.host = ? AND a.key = ?`,
      )
      .pluck(),

    dataVersion: db.prepare<[], number>('PRAGMA data_version').pluck(),
  };
}
