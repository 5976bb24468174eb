/**
 * Which SQL a tenant may run against its own database (SECURITY.md: an API must reach no data but
 * its own, load no code and learn nothing of the host).
 *
 * Two layers, both always applied, the first one first:
 *  (a) a lexical check on SQLite's own tokens (string literals, quoted identifiers and comments
 *      skipped exactly as SQLite skips them): one statement per string; no ATTACH, DETACH, VACUUM,
 *      PRAGMA, EXPLAIN or transaction control as a statement; no `pragma_*` table-valued function,
 *      no `sqlite_dbpage`, no `load_extension()` / `fts3_tokenizer()` under any spelling.
 *      It must run before anything is prepared: SQLite carries out some PRAGMAs while it *compiles*
 *      them, so even `EXPLAIN PRAGMA …` would have an effect.
 *  (b) the statement compiled by SQLite itself (`EXPLAIN <sql>`, never stepped): refused when its
 *      program has a `Vacuum`, `AutoCommit` or `Savepoint` opcode, or calls one of the functions
 *      `sqlite_attach`, `sqlite_detach`, `load_extension`, `fts3_tokenizer`.
 *
 * A refusal is `Errors.sqlRefused` (ANVIL_ERR_SQL_REFUSED, status 500), whose message names what was refused.
 * The tokenizer is in sql-tokens.ts, the statement splitter in sql-statements.ts, both layers in sql-checks.ts.
 */
import type Database from 'better-sqlite3';
import type { LRUCache } from 'lru-cache';
import { AnvilError, Errors } from '../../shared/errors.js';
import { sqlTextCache } from './sql-cache.js';
import { checkSqlProgram, checkSqlText } from './sql-checks.js';

/**
 * The policy of one database connection: both layers, with the verdict remembered per SQL string
 * (LRU). Only verdicts are kept: a statement SQLite could not compile (say, its table does not
 * exist yet) is checked again next time.
 */
export class SqlPolicy {
  private readonly verdicts: LRUCache<string, AnvilError | true>;

  constructor(
    private readonly db: Database.Database,
    cache: { maxEntries: number; maxChars: number } = { maxEntries: 1000, maxChars: 2 * 1024 * 1024 },
  ) {
    this.verdicts = sqlTextCache(cache.maxEntries, cache.maxChars);
  }

  /** Throws the refusal (or SQLite's error) when `sql` may not run; one statement only. */
  check(sql: string): void {
    const cached = this.verdicts.get(sql);
    if (cached !== undefined) {
      if (cached !== true) throw cached;
      return;
    }
    let verdict: AnvilError | true = true;
    try {
      checkSqlText(sql);
      checkSqlProgram(this.db, sql);
    } catch (error) {
      if (!(error instanceof AnvilError) || error.code !== Errors.sqlRefused.code) throw error;
      verdict = error;
    }
    this.verdicts.set(sql, verdict);
    if (verdict !== true) throw verdict;
  }

  /** Both layers, nothing remembered (migrations: each statement is seen once). */
  checkOnce(sql: string): void {
    checkSqlText(sql);
    checkSqlProgram(this.db, sql);
  }
}
