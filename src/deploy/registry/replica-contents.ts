import type Database from 'better-sqlite3';
import type { ApiRow, HostRow } from './statements.js';

/** Everything the registry holds, as rows: what a cluster replica copies from the control plane. */
export interface RegistryContents {
  hosts: HostRow[];
  apis: ApiRow[];
  /** `seq` orders releases by age, as the control plane numbered them. */
  releases: Array<{ seq: number; host: string; key: string; release: string; digest: string; created_at: string }>;
}

/** Replaces the registry's rows by `contents`, in one transaction: readers see the old or the new registry. */
export function replaceContents(db: Database.Database, contents: RegistryContents): void {
  const insertHost = db.prepare(
    'INSERT INTO hosts (name, kind, key, env, path) VALUES (@name, @kind, @key, @env, @path)',
  );
  const insertApi = db.prepare(
    'INSERT INTO apis (host, key, release, active, public, created_at, updated_at) VALUES (@host, @key, @release, @active, @public, @created_at, @updated_at)',
  );
  const insertRelease = db.prepare(
    'INSERT INTO releases (seq, host, key, release, digest, created_at) VALUES (@seq, @host, @key, @release, @digest, @created_at)',
  );
  db.transaction(() => {
    db.exec('DELETE FROM releases; DELETE FROM apis; DELETE FROM hosts;');
    for (const host of contents.hosts) insertHost.run(host);
    for (const api of contents.apis) insertApi.run(api);
    for (const release of contents.releases) insertRelease.run(release);
  }).immediate();
}
