/** What kind of failure a better-sqlite3 error is, by its SQLite result code (extended codes included). */
export type SqliteFailure = 'busy' | 'full' | 'constraint' | 'other';

export function sqliteFailure(error: unknown): SqliteFailure {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return 'other';
  if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) return 'busy';
  // The statement was rolled back: what was stored before is intact, writes work again once there is room.
  if (code === 'SQLITE_FULL') return 'full';
  if (code.startsWith('SQLITE_CONSTRAINT')) return 'constraint';
  return 'other';
}
