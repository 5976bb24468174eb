/** Limits of an API's database, in both modes (SQLite: api-database.ts; PostgreSQL: postgres/). */
export const DATABASE_LIMITS = {
  /** Longest SQL text of one query, in UTF-8 bytes. */
  maxSqlBytes: 100 * 1024,
  /** Most rows `all` gives back. */
  maxRows: 10_000,
  /** Prepared statements kept per connection (LRU), and the most SQL text they may hold in all. */
  statementCache: 200,
  statementCacheChars: 4 * 1024 * 1024,
  /** Largest migration file, in bytes (a migration may hold many statements, seeds included). */
  maxMigrationBytes: 10 * 1024 * 1024,
  busyTimeoutMs: 5000,
} as const;
