-- Migrations run in file-name order, each one once, in a transaction of its own (Anvil records
-- them in the table _anvil_migrations). Never edit a migration that has been deployed: change the
-- schema with a new file (003-add-phone.sql, ...) instead.

CREATE TABLE users (
  id         INTEGER PRIMARY KEY,  -- an alias of SQLite's rowid: the database assigns it on insert
  name       TEXT NOT NULL,
  email      TEXT NOT NULL UNIQUE, -- a second user with the same email is refused: Anvil answers 409
  created_at TEXT NOT NULL,        -- ISO 8601 in UTC, e.g. 2025-01-31T09:30:00.000Z
  updated_at TEXT NOT NULL
);
