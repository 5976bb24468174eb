/**
 * The SQLite database of one API: `<dataDir>/db.sqlite`, in WAL mode, opened once per actor thread
 * and shared there by DatabaseConnect, DatabaseQuery and custom directives' `state.db`.
 *
 * Every statement a tenant sends (queries and migrations alike) passes the SQL policy first
 * (sql-policy.ts). Values are bound, never spliced into the text.
 *
 * Values given back are plain JSON data:
 *  - INTEGER: a number when it is a safe integer (|n| <= 2^53 - 1), else its decimal string;
 *  - REAL: a number; TEXT: a string; NULL: null;
 *  - BLOB: a base64 string.
 * Parameters: a list binds `?` in order, a map binds `:name`, `@name`, `$name` and `?NNN` (keys
 * with or without the prefix: `name`, `:name`, `NNN`). null/undefined bind NULL, booleans 1/0,
 * lists and maps their JSON text.
 */
import { mkdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import Database from 'better-sqlite3';
import type { ApiRuntime } from '../../engine/context.js';
import { AnvilError, Errors } from '../../shared/errors.js';
import { hostDiskGate } from '../../shared/quotas/host-disk.js';
import { DATABASE_LIMITS } from './database-limits.js';
import { DatabaseQuota } from './database-quota.js';
import { countSqlTime } from './sql-clock.js';
import { migrationFiles, migrationFolder } from './migration-files.js';
import { sqlTextCache } from './sql-cache.js';
import { checkSqlText } from './sql-checks.js';
import { SqlPolicy } from './sql-policy.js';
import { bindArguments, fromSqlite, toRow, type Row } from './sql-values.js';
import { sqliteFailure } from './sqlite-failure.js';

export { DATABASE_LIMITS } from './database-limits.js';

export type { Row, SqlValue } from './sql-values.js';
export interface RunResult {
  changes: number;
  /** A number when it is a safe integer, else its decimal string. */
  lastInsertRowid: number | string;
}
/** A list (positional `?`) or a map (named `:name`, `@name`, `$name`). */
export type SqlParams = readonly unknown[] | Readonly<Record<string, unknown>>;

const MIGRATIONS_TABLE = '_anvil_migrations';

function sqlError(error: unknown, quota: DatabaseQuota | null = null): AnvilError {
  if (error instanceof AnvilError) return error;
  const message = error instanceof Error ? error.message : String(error);
  switch (sqliteFailure(error)) {
    case 'constraint':
      return Errors.sqlConstraint(message);
    case 'full':
      return quota === null ? Errors.diskFull(message) : quota.full(message);
    case 'busy':
      return Errors.sqlBusy(message);
    default:
      return Errors.sqlFailed(message);
  }
}

/** What went wrong with a file, without its path (messages may reach tenant code). */
function fileProblem(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? `cannot read it (${code})` : 'cannot read it';
}

/** A prepared statement, and its column names once read when they cannot change. */
interface Prepared {
  readonly statement: Database.Statement;
  /**
   * SQL without `*` names its columns in its text: a schema change can make it fail to recompile,
   * never rename them, so they are read once (reading them costs as much as a short query). With a
   * `*` they follow the schema and are read on every use.
   */
  readonly fixedColumns: boolean;
  /** False for a statement that only reads (sqlite3_stmt_readonly). */
  readonly writes: boolean;
  /** A write that may make the file grow: every write but DELETE and DROP (refused while the host is over its disk total). */
  readonly grows: boolean;
  names: string[] | null;
}

/** The column names of a statement that returned rows (read after it ran: it may have been recompiled). */
function columnNames(prepared: Prepared): string[] {
  if (prepared.names !== null) return prepared.names;
  const names = prepared.statement.columns().map((column) => column.name);
  if (prepared.fixedColumns) prepared.names = names;
  return names;
}

/** The disk quota of the database (database-quota.ts), and where its refusals are counted. */
/** Statements that free room (a leading comment makes a statement count as growing). */
const SHRINKING = /^\s*(DELETE|DROP)\b/i;

export interface DatabaseQuotaOptions {
  maxBytes: number;
  refusals: { add(quota: string): void };
  /** The public host's disk total: statements that may make the database grow are refused while it is over. */
  hostDisk?: { check(): void };
}

export class ApiDatabase {
  readonly file: string;
  private readonly db: Database.Database;
  private readonly policy: SqlPolicy;
  private readonly quota: DatabaseQuota | null;
  private readonly hostDisk: { check(): void } | null;
  private readonly statements = sqlTextCache<Prepared>(
    DATABASE_LIMITS.statementCache,
    DATABASE_LIMITS.statementCacheChars,
  );
  private migratedDir: string | null = null;
  private writeCheck: (() => void) | null = null;

  /** Opens (creating it and its folders if need be) `<dataDir>/db.sqlite`, under `quota` when given. */
  constructor(dataDir: string, quota: DatabaseQuotaOptions | null = null) {
    this.file = join(dataDir, 'db.sqlite');
    let db: Database.Database;
    try {
      mkdirSync(dataDir, { recursive: true });
      db = new Database(this.file, { timeout: DATABASE_LIMITS.busyTimeoutMs });
    } catch (error) {
      const code = (error as { code?: unknown } | null)?.code;
      throw Errors.sqlFailed(`cannot open the database${typeof code === 'string' ? ` (${code})` : ''}`);
    }
    let limit: DatabaseQuota | null = null;
    try {
      db.pragma(`busy_timeout = ${DATABASE_LIMITS.busyTimeoutMs}`);
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = NORMAL');
      db.pragma('foreign_keys = ON');
      db.pragma('trusted_schema = OFF');
      if (quota !== null)
        limit = new DatabaseQuota(db, this.file, quota.maxBytes, quota.refusals, DATABASE_LIMITS.busyTimeoutMs);
      db.defaultSafeIntegers(true);
      db.exec(`CREATE TABLE IF NOT EXISTS ${MIGRATIONS_TABLE} (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)`);
    } catch (error) {
      db.close();
      throw sqlError(error, limit);
    }
    this.quota = limit;
    this.hostDisk = quota?.hostDisk ?? null;
    this.db = db;
    this.policy = new SqlPolicy(db);
  }

  /** True once `migrate` succeeded on this connection. */
  get migrated(): boolean {
    return this.migratedDir !== null;
  }

  /**
   * Applies the release's pending migrations: `Assets/db/*.sql`, or `Assets/sql/*.sql` when there
   * is no `Assets/db` folder, in file-name order, each file once and in its own BEGIN IMMEDIATE
   * transaction (so two threads opening the same file at once apply it once: the second one waits,
   * then finds it recorded). A failing file is rolled back and throws; nothing after it runs, and
   * the next call tries again. Returns the names applied by this call.
   */
  migrate(releaseDir: string): string[] {
    const folder = migrationFolder(releaseDir);
    const applied: string[] = [];
    if (folder !== null) {
      const known = new Set(this.db.prepare(`SELECT name FROM ${MIGRATIONS_TABLE}`).pluck().all() as string[]);
      let names: string[];
      try {
        names = migrationFiles(folder.path);
      } catch (error) {
        throw Errors.migrationsUnreadable(folder.label, fileProblem(error));
      }
      for (const name of names) {
        if (known.has(name)) continue;
        if (this.applyMigration(join(folder.path, name), name, `${folder.label}/${name}`)) applied.push(name);
      }
    }
    this.migratedDir = releaseDir;
    return applied;
  }

  private applyMigration(path: string, name: string, label: string): boolean {
    const fail = (message: string) => Errors.migrationFailed(label, message);
    let sql: string;
    try {
      if (statSync(path).size > DATABASE_LIMITS.maxMigrationBytes)
        throw fail(`larger than ${DATABASE_LIMITS.maxMigrationBytes} bytes`);
      sql = readFileSync(path, 'utf8').replace(/^\uFEFF/, '');
    } catch (error) {
      throw error instanceof AnvilError ? error : fail(fileProblem(error));
    }
    try {
      this.db.exec('BEGIN IMMEDIATE');
    } catch (error) {
      throw fail((error as Error).message);
    }
    try {
      // Checked again inside the write lock: another thread may have applied it meanwhile.
      const done = this.db.prepare(`SELECT 1 FROM ${MIGRATIONS_TABLE} WHERE name = ?`).get(name) !== undefined;
      if (!done) {
        for (const statement of checkSqlText(sql, { allowMany: true })) {
          // Each statement alone, compiled and checked after the ones before it ran (they may
          // create its tables), then prepared as exactly one statement: nothing hides behind it.
          this.policy.checkOnce(statement.text);
          this.db.prepare(statement.text).run();
        }
        this.db
          .prepare(`INSERT INTO ${MIGRATIONS_TABLE} (name, applied_at) VALUES (?, ?)`)
          .run(name, new Date().toISOString());
      }
      this.db.exec('COMMIT');
      return !done;
    } catch (error) {
      if (this.db.inTransaction) this.db.exec('ROLLBACK');
      throw fail(error instanceof Error ? error.message : String(error));
    }
  }

  /** Every row (at most {@link DATABASE_LIMITS.maxRows}). */
  all(sql: string, params?: unknown): Row[] {
    const prepared = this.prepare(sql, 'all');
    const args = bindArguments(params);
    const rows: Row[] = [];
    let names: string[] | null = null;
    const startedAt = performance.now();
    try {
      for (const values of prepared.statement.iterate(...args) as IterableIterator<unknown[]>) {
        if (rows.length >= DATABASE_LIMITS.maxRows) {
          throw Errors.sqlLimit(
            `SQL result has more than ${DATABASE_LIMITS.maxRows} rows (the limit of one query): add a LIMIT`,
          );
        }
        // Read once a row is there: SQLite recompiles a statement whose tables changed when it runs it.
        names ??= columnNames(prepared);
        rows.push(toRow(names, values));
      }
    } catch (error) {
      throw sqlError(error, this.quota);
    } finally {
      countSqlTime(startedAt);
      this.wrote(prepared);
    }
    return rows;
  }

  /** The first row, or null. */
  get(sql: string, params?: unknown): Row | null {
    const prepared = this.prepare(sql, 'get');
    const args = bindArguments(params);
    const startedAt = performance.now();
    try {
      const values = prepared.statement.get(...args) as unknown[] | undefined;
      return values === undefined ? null : toRow(columnNames(prepared), values);
    } catch (error) {
      throw sqlError(error, this.quota);
    } finally {
      countSqlTime(startedAt);
      this.wrote(prepared);
    }
  }

  /** Runs a statement; rows it may return are dropped. */
  run(sql: string, params?: unknown): RunResult {
    const prepared = this.prepare(sql, 'run');
    const args = bindArguments(params);
    const startedAt = performance.now();
    try {
      const result = prepared.statement.run(...args);
      return {
        changes: Number(result.changes),
        lastInsertRowid: fromSqlite(BigInt(result.lastInsertRowid)) as number | string,
      };
    } catch (error) {
      throw sqlError(error, this.quota);
    } finally {
      countSqlTime(startedAt);
      this.wrote(prepared);
    }
  }

  /** True when the SQL text is a statement that writes (checked and prepared as a query would be). */
  writes(sql: string): boolean {
    return this.compiled(sql).writes;
  }

  /** Called before every statement that writes, which it may refuse by throwing (a transaction elsewhere holds the write lock). */
  guardWrites(check: () => void): void {
    this.writeCheck = check;
  }

  get inTransaction(): boolean {
    return this.db.inTransaction;
  }

  /** BEGIN IMMEDIATE: the write lock is taken now, so a later write of the transaction cannot find it taken. */
  begin(): void {
    this.quota?.beforeWrite();
    this.control('BEGIN IMMEDIATE');
  }

  commit(): void {
    try {
      this.control('COMMIT');
    } finally {
      this.quota?.afterWrite();
    }
  }

  /** Rolls back the open transaction; does nothing without one. */
  rollback(): void {
    if (!this.db.inTransaction) return;
    try {
      this.control('ROLLBACK');
    } finally {
      this.quota?.afterWrite();
    }
  }

  /** Transaction control: Anvil's own statements, which the SQL policy refuses from tenants. */
  private control(sql: 'BEGIN IMMEDIATE' | 'COMMIT' | 'ROLLBACK'): void {
    try {
      this.db.exec(sql);
    } catch (error) {
      throw sqlError(error, this.quota);
    }
  }

  /** After a statement outside a transaction that may have written (see DatabaseQuota.afterWrite). */
  private wrote(prepared: Prepared): void {
    if (prepared.writes && !this.db.inTransaction) this.quota?.afterWrite();
  }

  close(): void {
    this.statements.clear();
    if (this.db.open) this.db.close();
  }

  /** A checked, prepared statement from the LRU cache, fit for `mode`, its write allowed now. */
  private prepare(sql: string, mode: 'all' | 'get' | 'run'): Prepared {
    const prepared = this.compiled(sql);
    if (mode !== 'run' && !prepared.statement.reader) {
      throw Errors.sqlFailed(`mode ${mode} needs a statement that returns rows (SELECT, or … RETURNING); use run`);
    }
    if (prepared.writes) {
      if (this.writeCheck !== null) this.writeCheck();
      if (prepared.grows) this.hostDisk?.check();
      if (!this.db.inTransaction) this.quota?.beforeWrite();
    }
    return prepared;
  }

  /** A checked, prepared statement from the LRU cache. */
  private compiled(sql: string): Prepared {
    if (typeof sql !== 'string') throw Errors.sqlFailed('the SQL text must be a string');
    let prepared = this.statements.get(sql);
    if (prepared === undefined) {
      if (Buffer.byteLength(sql, 'utf8') > DATABASE_LIMITS.maxSqlBytes) {
        throw Errors.sqlLimit(`SQL text longer than ${DATABASE_LIMITS.maxSqlBytes} bytes (the limit of one query)`);
      }
      try {
        this.policy.check(sql);
        const statement = this.db.prepare(sql);
        // Rows as value arrays, named here: an object built by better-sqlite3 would lose a column
        // named __proto__ (or take its value for a prototype).
        if (statement.reader) statement.raw(true);
        prepared = {
          statement,
          fixedColumns: !sql.includes('*'),
          writes: !statement.readonly,
          grows: !statement.readonly && !SHRINKING.test(sql),
          names: null,
        };
      } catch (error) {
        throw sqlError(error, this.quota);
      }
      this.statements.set(sql, prepared);
    }
    return prepared;
  }
}

/**
 * The API's database for this actor thread (resource `db`, closed with the thread), with the
 * release's migrations applied once per thread. A failed migration throws here and is tried again
 * by the next call.
 */
export function apiDatabase(api: ApiRuntime): ApiDatabase {
  const db = api.resource('db', () => new ApiDatabase(api.dataDir, databaseQuota(api)));
  if (!db.migrated) db.migrate(api.releaseDir);
  return db;
}

/** The API's database quota, for each connection it opens. */
export function databaseQuota(api: ApiRuntime): DatabaseQuotaOptions {
  return { maxBytes: api.quotas.databaseBytes, refusals: api.refusals, hostDisk: hostDiskGate(api) };
}
