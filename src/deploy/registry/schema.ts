import type Database from 'better-sqlite3';

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

/** Applies the migrations this file lacks; refuses a file migrated by a newer Anvil. */
export function migrate(db: Database.Database): void {
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
