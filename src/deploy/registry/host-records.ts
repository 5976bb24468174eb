import type Database from 'better-sqlite3';
import { Errors } from '../../shared/errors.js';
import { checkEnv, checkHostKey, checkHostName, checkPath } from './record-checks.js';
import type { HostRecord } from './records.js';
import type { HostRow, Statements } from './statements.js';

/**
 * The registry's virtual hosts: admin hosts, and public hosts with their key, env and path. Names
 * given to `getHost` and `removeHost` come in lower case (the Registry lowers them); the others are
 * checked and lowered here.
 */
export class HostRecords {
  private readonly txRemoveHost;

  constructor(
    db: Database.Database,
    private readonly stmt: Statements,
  ) {
    this.txRemoveHost = db.transaction((name: string): boolean => {
      const apis = this.stmt.countApisOfHost.get(name) ?? 0;
      if (apis > 0) {
        throw Errors.registryInvalid('name', `host "${name}" still has ${apis} API(s); delete them first`);
      }
      return this.stmt.deleteHost.run(name).changes > 0;
    });
  }

  listHosts(): HostRecord[] {
    return this.stmt.listHosts.all().map(toHost);
  }

  getHost(name: string): HostRecord | null {
    const row = this.stmt.getHost.get(name);
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
    if (!row || row.kind !== 'public') throw Errors.registryInvalid('name', `"${n}" is not a public host`);
    const key = changes.key === undefined ? row.key : checkHostKey(changes.key);
    const env = changes.env === undefined ? row.env : checkEnv(changes.env);
    const path = changes.path === undefined ? row.path : checkPath(changes.path);
    this.stmt.updateHost.run(key ?? '', env ?? '', path, n);
  }

  removeHost(name: string): boolean {
    return this.txRemoveHost(name);
  }

  private insertHost(
    name: string,
    kind: 'public' | 'admin',
    key: string | null,
    env: string | null,
    path: string | null,
  ) {
    try {
      this.stmt.insertHost.run(name, kind, key, env, path);
    } catch (err) {
      if ((err as { code?: string }).code === 'SQLITE_CONSTRAINT_PRIMARYKEY') {
        throw Errors.registryInvalid('name', `host "${name}" already exists`);
      }
      throw err;
    }
  }
}

function toHost(row: HostRow): HostRecord {
  if (row.kind === 'admin') return { name: row.name, kind: 'admin' };
  return { name: row.name, kind: 'public', key: row.key ?? '', env: row.env ?? '', path: row.path };
}
