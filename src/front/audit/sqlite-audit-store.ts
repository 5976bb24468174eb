import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import type { AuditAction, AuditEntry, AuditOrigin, AuditRecord } from './audit-entry.js';
import type { AuditPage, AuditQuery, AuditRetention, AuditStore } from './audit-store.js';

const DAY_MS = 24 * 60 * 60 * 1000;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS audit (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  time_ms INTEGER NOT NULL,
  action TEXT NOT NULL,
  host TEXT,
  api TEXT,
  release TEXT,
  result TEXT NOT NULL,
  status INTEGER,
  error TEXT,
  address TEXT,
  key_fingerprint TEXT,
  origin TEXT NOT NULL,
  detail TEXT
);
CREATE INDEX IF NOT EXISTS audit_by_host ON audit (host, id);
CREATE INDEX IF NOT EXISTS audit_by_time ON audit (time_ms);
CREATE TRIGGER IF NOT EXISTS audit_append_only BEFORE UPDATE ON audit
BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
`;

/**
 * The number of entries of each host ('' for the instance-wide ones), kept by triggers so that
 * retention per host costs a lookup and the removal of the excess, not a count of the host's rows.
 * Added to an older file once, counting what it holds.
 */
const COUNTS = `
CREATE TABLE audit_rows_by_host (host TEXT PRIMARY KEY, rows INTEGER NOT NULL) WITHOUT ROWID;
INSERT INTO audit_rows_by_host (host, rows) SELECT coalesce(host, ''), COUNT(*) FROM audit GROUP BY coalesce(host, '');
CREATE TRIGGER audit_rows_added AFTER INSERT ON audit
BEGIN INSERT INTO audit_rows_by_host (host, rows) VALUES (coalesce(NEW.host, ''), 1) ON CONFLICT (host) DO UPDATE SET rows = rows + 1; END;
CREATE TRIGGER audit_rows_removed AFTER DELETE ON audit
BEGIN UPDATE audit_rows_by_host SET rows = rows - 1 WHERE host = coalesce(OLD.host, ''); END;
`;

interface Row {
  id: number;
  time_ms: number;
  action: string;
  host: string | null;
  api: string | null;
  release: string | null;
  result: string;
  status: number | null;
  error: string | null;
  address: string | null;
  key_fingerprint: string | null;
  origin: string;
  detail: string | null;
}

/**
 * The audit log in its own SQLite file (`.anvil/audit.sqlite`, WAL): the instance and `anvil`
 * commands on the same data directory append to it at the same time without losing a line, a page
 * of one host's entries is an index range, and retention is one DELETE.
 */
export class SqliteAuditStore implements AuditStore {
  private readonly db: Database.Database;
  private readonly insert: Database.Statement;
  private readonly countOf: Database.Statement;
  private readonly removeOldest: Database.Statement;
  private readonly listings = new Map<string, Database.Statement>();

  static open(file: string): SqliteAuditStore {
    mkdirSync(dirname(file), { recursive: true });
    const db = new Database(file, { timeout: 5000 });
    try {
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = NORMAL');
      db.exec(SCHEMA);
      // Immediate: an `anvil` command opening the same file at the same time adds the counts once.
      db.transaction(() => {
        if (
          db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'audit_rows_by_host'").get() ===
          undefined
        )
          db.exec(COUNTS);
      }).immediate();
      return new SqliteAuditStore(db);
    } catch (error) {
      db.close();
      throw error;
    }
  }

  private constructor(db: Database.Database) {
    this.db = db;
    this.insert = db.prepare(
      `INSERT INTO audit (time_ms, action, host, api, release, result, status, error, address, key_fingerprint, origin, detail)
       VALUES (@timeMs, @action, @host, @api, @release, @result, @status, @error, @address, @keyFingerprint, @origin, @detail)`,
    );
    this.countOf = db.prepare("SELECT rows FROM audit_rows_by_host WHERE host = coalesce(?, '')").pluck();
    // One statement: an `anvil` command trimming the same host at the same time cannot make both remove the excess.
    this.removeOldest = db.prepare(
      "DELETE FROM audit WHERE id IN (SELECT id FROM audit WHERE host IS @host ORDER BY id LIMIT max(0, (SELECT rows FROM audit_rows_by_host WHERE host = coalesce(@host, '')) - @rows))",
    );
  }

  async append(record: AuditRecord): Promise<number> {
    const info = this.insert.run({ ...record, detail: record.detail === null ? null : JSON.stringify(record.detail) });
    return Number(info.lastInsertRowid);
  }

  async list(query: AuditQuery): Promise<AuditPage> {
    // Instance-wide entries (no host: admin hosts, every API's jobs) concern every host.
    const clauses = ['(host = @host OR host IS NULL)'];
    if (query.api !== undefined) clauses.push('api = @api');
    if (query.action !== undefined) clauses.push('action = @action');
    if (query.before !== undefined) clauses.push('id < @before');
    const sql = `SELECT * FROM audit WHERE ${clauses.join(' AND ')} ORDER BY id DESC LIMIT @take`;
    let statement = this.listings.get(sql);
    if (statement === undefined) this.listings.set(sql, (statement = this.db.prepare(sql)));
    const rows = statement.all({ ...query, take: query.limit + 1 }) as Row[];
    const page = rows.slice(0, query.limit).map(toEntry);
    return { entries: page, next: rows.length > query.limit ? page[page.length - 1]!.id : null };
  }

  async since(afterId: number, origin: AuditOrigin, limit: number): Promise<AuditEntry[]> {
    const rows = this.db
      .prepare('SELECT * FROM audit WHERE id > ? AND origin = ? ORDER BY id LIMIT ?')
      .all(afterId, origin, limit) as Row[];
    return rows.map(toEntry);
  }

  async lastId(): Promise<number> {
    const row = this.db.prepare('SELECT MAX(id) AS id FROM audit').get() as { id: number | null };
    return row.id ?? 0;
  }

  async prune(retention: AuditRetention, nowMs: number): Promise<number> {
    const byAge = this.db.prepare('DELETE FROM audit WHERE time_ms < ?').run(nowMs - retention.days * DAY_MS).changes;
    const over = this.db
      .prepare("SELECT nullif(host, '') AS host FROM audit_rows_by_host WHERE rows > ?")
      .pluck()
      .all(retention.rows) as Array<string | null>;
    let byCount = 0;
    for (const host of over) byCount += await this.trim(host, retention.rows);
    return byAge + byCount;
  }

  async trim(host: string | null, rows: number): Promise<number> {
    const count = (this.countOf.get(host) as number | undefined) ?? 0;
    return count > rows ? this.removeOldest.run({ host, rows }).changes : 0;
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}

function toEntry(row: Row): AuditEntry {
  return {
    id: row.id,
    time: new Date(row.time_ms).toISOString(),
    action: row.action as AuditAction,
    host: row.host,
    api: row.api,
    release: row.release,
    result: row.result === 'ok' ? 'ok' : 'error',
    status: row.status,
    error: row.error,
    address: row.address,
    keyFingerprint: row.key_fingerprint,
    origin: row.origin === 'cli' ? 'cli' : 'http',
    detail: row.detail === null ? null : (JSON.parse(row.detail) as Record<string, unknown>),
  };
}
