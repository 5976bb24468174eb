/**
 * The embedded key-value store: one SQLite file, `<dataDir>/.anvil/kv.sqlite` (WAL, busy_timeout
 * 5000), shared by every thread of every cell process of the instance. Each backend is one
 * connection, so each thread opens its own.
 *
 * A row is (ns, key) → value, expires_at (epoch ms or NULL). The namespace is a column of the
 * primary key, not a prefix of the key, so no key string can reach another namespace.
 * Expiry is checked on every read; expired rows are swept now and then (every `sweepEvery` writes
 * of a connection, at most `sweepBatch` rows at a time). `increment` is one INSERT … ON CONFLICT
 * DO UPDATE … RETURNING statement, atomic across connections.
 *
 * Quota: `kv_usage` holds each namespace's bytes (UTF-8 of its keys and values, an integer counted
 * as its decimal text), kept by triggers on every insert, update and delete, so no write path can
 * forget it. A write under a quota runs in an IMMEDIATE transaction: it is made, and when it grew the
 * namespace past its quota, the namespace's expired rows are swept and, if it is still over, the
 * write is rolled back and refused (ANVIL_ERR_QUOTA_KV_BYTES, 507). Expired rows count until swept.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { AnvilError, Errors } from '../../shared/errors.js';
import {
  checkIncrement,
  checkKey,
  checkNamespace,
  checkQuota,
  checkTtl,
  checkValue,
  checkWindow,
} from './kv-checks.js';
import type { KvBackend, KvQuota, KvStore } from '../../engine/kv-store.js';
import { sqliteFailure } from '../database/sqlite-failure.js';
import { decodeWindowCount, encodeWindowCount, nextWindowCount } from '../../engine/window-counter.js';

export const EMBEDDED_KV_DEFAULTS = {
  busyTimeoutMs: 5000,
  sweepEvery: 1000,
  sweepBatch: 500,
} as const;

export interface EmbeddedKvOptions {
  dataDir: string;
  /** The clock, epoch ms (tests inject one). Default `Date.now`. */
  now?: () => number;
  sweepEvery?: number;
  sweepBatch?: number;
}

export function embeddedKvFile(dataDir: string): string {
  return join(dataDir, '.anvil', 'kv.sqlite');
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS kv (
  ns TEXT NOT NULL,
  key TEXT NOT NULL,
  value NOT NULL,
  expires_at INTEGER,
  PRIMARY KEY (ns, key)
);
CREATE INDEX IF NOT EXISTS kv_expires_at ON kv (expires_at) WHERE expires_at IS NOT NULL;
`;

const SIZE_OF = (row: 'NEW' | 'OLD') => `length(CAST(${row}.key AS BLOB)) + length(CAST(${row}.value AS BLOB))`;

/** user_version 1: the bytes of each namespace, kept by triggers, counted once from the rows already there. */
const USAGE_SCHEMA = `
CREATE TABLE IF NOT EXISTS kv_usage (ns TEXT PRIMARY KEY, bytes INTEGER NOT NULL) WITHOUT ROWID;
CREATE TRIGGER IF NOT EXISTS kv_usage_insert AFTER INSERT ON kv BEGIN
  INSERT INTO kv_usage (ns, bytes) VALUES (NEW.ns, ${SIZE_OF('NEW')})
  ON CONFLICT (ns) DO UPDATE SET bytes = bytes + excluded.bytes;
END;
CREATE TRIGGER IF NOT EXISTS kv_usage_update AFTER UPDATE OF value ON kv BEGIN
  UPDATE kv_usage SET bytes = bytes - (${SIZE_OF('OLD')}) + (${SIZE_OF('NEW')}) WHERE ns = NEW.ns;
END;
CREATE TRIGGER IF NOT EXISTS kv_usage_delete AFTER DELETE ON kv BEGIN
  UPDATE kv_usage SET bytes = bytes - (${SIZE_OF('OLD')}) WHERE ns = OLD.ns;
END;
DELETE FROM kv_usage;
INSERT INTO kv_usage (ns, bytes) SELECT ns, sum(length(CAST(key AS BLOB)) + length(CAST(value AS BLOB))) FROM kv GROUP BY ns;
PRAGMA user_version = 1;
`;

/** Counters are INTEGER; a TEXT value counts when it is an integer's canonical decimal (as Redis). */
const COUNTABLE = `(typeof(kv.value) = 'integer' OR (typeof(kv.value) = 'text' AND kv.value = CAST(CAST(kv.value AS INTEGER) AS TEXT)))`;
const EXPIRED = `(kv.expires_at IS NOT NULL AND kv.expires_at <= @now)`;

// When the WHERE of the DO UPDATE is false (a non-integer value, or a result out of range) no row
// is written and RETURNING gives nothing: the caller tells which from the row it then reads.
const INCREMENT_SQL = `
INSERT INTO kv (ns, key, value, expires_at) VALUES (@ns, @key, @by, @now + @ttl)
ON CONFLICT (ns, key) DO UPDATE SET
  value = CASE WHEN ${EXPIRED} THEN @by ELSE kv.value + @by END,
  expires_at = CASE WHEN ${EXPIRED} OR kv.expires_at IS NULL THEN @now + @ttl ELSE kv.expires_at END
WHERE ${EXPIRED} OR (${COUNTABLE} AND abs(kv.value + @by) <= 9007199254740991)
RETURNING value, expires_at`;

interface Statements {
  get: Database.Statement<{ ns: string; key: string; now: bigint }, { value: string | number }>;
  set: Database.Statement<{ ns: string; key: string; value: string; expires: bigint | null }>;
  setIfAbsent: Database.Statement<{ ns: string; key: string; value: string; expires: bigint | null; now: bigint }>;
  delete: Database.Statement<{ ns: string; key: string }>;
  increment: Database.Statement<
    { ns: string; key: string; by: bigint; now: bigint; ttl: bigint },
    { value: number; expires_at: number }
  >;
  peek: Database.Statement<{ ns: string; key: string; now: bigint }, { countable: number }>;
  sweep: Database.Statement<{ now: bigint; limit: number }>;
  sweepNamespace: Database.Statement<{ ns: string; now: bigint }>;
  usage: Database.Statement<{ ns: string }, { bytes: number }>;
}

function sqliteError(error: unknown): AnvilError {
  if (error instanceof AnvilError) return error;
  const message = error instanceof Error ? error.message : String(error);
  const failure = sqliteFailure(error);
  if (failure === 'busy') return Errors.kvUnavailable(`the SQLite store is busy (${message})`);
  if (failure === 'full') return Errors.diskFull(`the key-value store: ${message}`);
  return Errors.kvFailed(`SQLite: ${message}`);
}

const SLEEPER = new Int32Array(new SharedArrayBuffer(4));

/**
 * Runs `setUp` (idempotent) until it does not meet a busy file, within the busy timeout. Threads
 * opening a fresh file together can be told "database is locked" at once, without SQLite's busy
 * handler: the switch to WAL, and a read lock that would have to grow while another connection
 * writes (SQLite's rule against deadlocks), do not wait (seen once in CI: six threads at once).
 */
function retryWhileBusy(setUp: () => void): void {
  const deadline = Date.now() + EMBEDDED_KV_DEFAULTS.busyTimeoutMs;
  for (let waitMs = 2; ; waitMs = Math.min(waitMs * 2, 100)) {
    try {
      setUp();
      return;
    } catch (error) {
      if (sqliteFailure(error) !== 'busy' || Date.now() + waitMs > deadline) throw error;
      Atomics.wait(SLEEPER, 0, 0, waitMs);
    }
  }
}

export class EmbeddedKvBackend implements KvBackend {
  readonly file: string;
  private readonly db: Database.Database;
  private readonly stmt: Statements;
  private readonly clock: () => number;
  private readonly sweepEvery: number;
  private readonly sweepBatch: number;
  private writes = 0;
  private closed = false;

  static open(options: EmbeddedKvOptions): EmbeddedKvBackend {
    if (typeof options.dataDir !== 'string' || options.dataDir === '')
      throw Errors.kvBadArgument('dataDir must be a non-empty path');
    const file = embeddedKvFile(options.dataDir);
    mkdirSync(join(options.dataDir, '.anvil'), { recursive: true });
    const db = new Database(file, { timeout: EMBEDDED_KV_DEFAULTS.busyTimeoutMs });
    try {
      db.pragma(`busy_timeout = ${EMBEDDED_KV_DEFAULTS.busyTimeoutMs}`);
      retryWhileBusy(() => {
        db.pragma('journal_mode = WAL');
        db.pragma('synchronous = NORMAL');
        db.exec(SCHEMA);
        // IMMEDIATE: threads opening the file together count the existing rows once, before any writes.
        db.transaction(() => {
          if ((db.pragma('user_version', { simple: true }) as number) < 1) db.exec(USAGE_SCHEMA);
        }).immediate();
      });
      return new EmbeddedKvBackend(file, db, options);
    } catch (error) {
      db.close();
      throw sqliteError(error);
    }
  }

  private constructor(file: string, db: Database.Database, options: EmbeddedKvOptions) {
    this.file = file;
    this.db = db;
    this.clock = options.now ?? Date.now;
    this.sweepEvery = positiveInteger('sweepEvery', options.sweepEvery ?? EMBEDDED_KV_DEFAULTS.sweepEvery);
    this.sweepBatch = positiveInteger('sweepBatch', options.sweepBatch ?? EMBEDDED_KV_DEFAULTS.sweepBatch);
    this.stmt = {
      get: db.prepare(`SELECT value FROM kv WHERE ns = @ns AND key = @key AND NOT ${EXPIRED}`),
      set: db.prepare(
        `INSERT INTO kv (ns, key, value, expires_at) VALUES (@ns, @key, @value, @expires)
         ON CONFLICT (ns, key) DO UPDATE SET value = excluded.value, expires_at = excluded.expires_at`,
      ),
      // An expired row is replaced; a live one is left as it is (no change: the caller is told so).
      setIfAbsent: db.prepare(
        `INSERT INTO kv (ns, key, value, expires_at) VALUES (@ns, @key, @value, @expires)
         ON CONFLICT (ns, key) DO UPDATE SET value = excluded.value, expires_at = excluded.expires_at WHERE ${EXPIRED}`,
      ),
      delete: db.prepare('DELETE FROM kv WHERE ns = @ns AND key = @key'),
      increment: db.prepare(INCREMENT_SQL),
      peek: db.prepare(`SELECT ${COUNTABLE} AS countable FROM kv WHERE ns = @ns AND key = @key AND NOT ${EXPIRED}`),
      sweep: db.prepare('DELETE FROM kv WHERE rowid IN (SELECT rowid FROM kv WHERE expires_at <= @now LIMIT @limit)'),
      sweepNamespace: db.prepare('DELETE FROM kv WHERE ns = @ns AND expires_at <= @now'),
      usage: db.prepare('SELECT bytes FROM kv_usage WHERE ns = @ns'),
    };
  }

  namespace(ns: string, quota?: KvQuota): KvStore {
    checkNamespace(ns);
    checkQuota(quota);
    const maxBytes = quota?.maxBytes;
    /**
     * Runs one write; under a quota, refuses (and undoes) it when it grew the namespace past it.
     * `atomic`: in an IMMEDIATE transaction even without a quota (a read, then a write).
     */
    const write = <T>(work: () => T, now: bigint, atomic = false): T => {
      if (maxBytes === undefined && !atomic) return this.run(work);
      const guarded = this.db.transaction((): T => {
        const before = this.usage(ns);
        const result = work();
        const grown = this.usage(ns);
        if (maxBytes !== undefined && grown > before && grown > maxBytes) {
          this.stmt.sweepNamespace.run({ ns, now });
          const after = this.usage(ns);
          if (after > maxBytes) throw Errors.quotaKvBytes(after, maxBytes);
        }
        return result;
      });
      return this.run(() => guarded.immediate());
    };
    return {
      get: async (key) => {
        checkKey(key);
        const row = this.run(() => this.stmt.get.get({ ns, key, now: this.now() }));
        return row === undefined ? null : String(row.value);
      },
      set: async (key, value, ttlMs) => {
        checkKey(key);
        checkValue(value);
        const ttl = checkTtl(ttlMs, false);
        const now = this.now();
        write(() => this.stmt.set.run({ ns, key, value, expires: ttl === undefined ? null : now + BigInt(ttl) }), now);
        this.wrote();
      },
      setIfAbsent: async (key, value, ttlMs) => {
        checkKey(key);
        checkValue(value);
        const ttl = checkTtl(ttlMs, false);
        const now = this.now();
        const expires = ttl === undefined ? null : now + BigInt(ttl);
        const { changes } = write(() => this.stmt.setIfAbsent.run({ ns, key, value, expires, now }), now);
        if (changes > 0) this.wrote();
        return changes > 0;
      },
      delete: async (key) => {
        checkKey(key);
        this.run(() => this.stmt.delete.run({ ns, key }));
      },
      increment: async (key, by, ttlMs) => {
        checkKey(key);
        checkIncrement(by);
        const ttl = checkTtl(ttlMs, true) as number;
        const now = this.now();
        const row = write(() => this.stmt.increment.get({ ns, key, by: BigInt(by), now, ttl: BigInt(ttl) }), now);
        if (row === undefined) {
          const current = this.run(() => this.stmt.peek.get({ ns, key, now }));
          throw current !== undefined && current.countable === 0 ? Errors.kvNotInteger() : Errors.kvOutOfRange();
        }
        this.wrote();
        return { value: row.value, ttlMs: Math.max(0, row.expires_at - Number(now)) };
      },
      countInWindow: async (key, by, window, keepMs) => {
        checkKey(key);
        checkIncrement(by);
        checkWindow(window);
        const keep = BigInt(checkTtl(keepMs, true) as number);
        const now = this.now();
        const counted = write(
          () => {
            const row = this.stmt.get.get({ ns, key, now });
            const stored = row === undefined ? null : decodeWindowCount(String(row.value));
            if (stored === undefined) throw Errors.kvFailed('the key holds a value that is not a window counter');
            const next = nextWindowCount(stored, by, window);
            if (!Number.isSafeInteger(next.value)) throw Errors.kvOutOfRange();
            this.stmt.set.run({ ns, key, value: encodeWindowCount(next), expires: now + keep });
            return next;
          },
          now,
          true,
        );
        this.wrote();
        return counted;
      },
    };
  }

  /** Bytes of keys and values the namespace holds (expired rows not swept yet included). */
  private usage(ns: string): number {
    return this.stmt.usage.get({ ns })?.bytes ?? 0;
  }

  /** Deletes up to `sweepBatch` expired rows; returns how many. */
  sweepExpired(): number {
    return this.run(() => this.stmt.sweep.run({ now: this.now(), limit: this.sweepBatch })).changes;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.db.close();
  }

  private now(): bigint {
    return BigInt(Math.floor(this.clock()));
  }

  private run<T>(work: () => T): T {
    if (this.closed) throw Errors.kvClosed();
    try {
      return work();
    } catch (error) {
      throw sqliteError(error);
    }
  }

  private wrote(): void {
    this.writes += 1;
    if (this.writes % this.sweepEvery !== 0) return;
    try {
      this.sweepExpired();
    } catch {
      // Best effort: the rows stay invisible to reads and the next sweep takes them.
    }
  }
}

function positiveInteger(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 1)
    throw Errors.kvBadArgument(`${name} must be an integer >= 1, got ${value}`);
  return value;
}
