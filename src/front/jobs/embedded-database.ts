/**
 * The embedded queue's SQLite file, `<dataDir>/.anvil/jobs.sqlite`: opening it (WAL,
 * `synchronous=FULL`, busy_timeout 5000), its schema, and what its errors mean.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { AnvilError, Errors } from '../../shared/errors.js';
import { EMBEDDED_QUEUE_DEFAULTS, embeddedQueueFile } from './embedded-options.js';
import { prepareStatements, type Statements } from './embedded-statements.js';
import { sqliteFailure } from '../../directives/database/sqlite-failure.js';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS jobs (
  id TEXT PRIMARY KEY,
  api TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('waiting', 'active', 'completed', 'failed')),
  payload TEXT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  error TEXT,
  created_at INTEGER NOT NULL,
  run_at INTEGER NOT NULL,
  lease_until INTEGER,
  finished_at INTEGER
);
-- "is anything due?" and the order of claims
CREATE INDEX IF NOT EXISTS jobs_due ON jobs (state, run_at);
-- the APIs with waiting jobs (skip-scan) and each one's oldest due jobs
CREATE INDEX IF NOT EXISTS jobs_api_due ON jobs (state, api, run_at);
-- counts/flush/requeue of one API, pruning of its completed jobs
CREATE INDEX IF NOT EXISTS jobs_api_state ON jobs (api, state, finished_at);
-- expired leases
CREATE INDEX IF NOT EXISTS jobs_lease ON jobs (lease_until) WHERE state = 'active';
`;

export interface JobsDatabase {
  file: string;
  db: Database.Database;
  stmt: Statements;
}

/** Opens (creating if need be) the queue's file in `dataDir`, with its statements prepared. */
export function openJobsDatabase(dataDir: string): JobsDatabase {
  const file = embeddedQueueFile(dataDir);
  mkdirSync(join(dataDir, '.anvil'), { recursive: true });
  const db = new Database(file, { timeout: EMBEDDED_QUEUE_DEFAULTS.busyTimeoutMs });
  try {
    db.pragma(`busy_timeout = ${EMBEDDED_QUEUE_DEFAULTS.busyTimeoutMs}`);
    db.pragma('journal_mode = WAL');
    // FULL: in WAL mode every commit syncs the WAL, so an acknowledged add survives a power cut.
    db.pragma('synchronous = FULL');
    db.exec(SCHEMA);
    return { file, db, stmt: prepareStatements(db) };
  } catch (error) {
    db.close();
    throw sqliteError(error);
  }
}

export function sqliteError(error: unknown): AnvilError {
  if (error instanceof AnvilError) return error;
  const message = error instanceof Error ? error.message : String(error);
  const failure = sqliteFailure(error);
  if (failure === 'busy') return Errors.jobsUnavailable(`the SQLite queue is busy (${message})`);
  if (failure === 'full') return Errors.diskFull(`the job queue: ${message}`);
  return Errors.jobsFailed(`SQLite: ${message}`);
}
