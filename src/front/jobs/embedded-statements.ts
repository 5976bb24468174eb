/** Every query of the embedded queue, prepared once per connection. */
import type Database from 'better-sqlite3';
import type { CountRow, Row } from './embedded-rows.js';

/** A due job that a claim may take, in claim order (run_at, then insertion). */
export interface Candidate {
  id: string;
  run_at: number;
  seq: number;
}

export interface Statements {
  insert: Database.Statement<{ id: string; api: string; payload: string; now: number; runAt: number }>;
  get: Database.Statement<{ id: string }, Row>;
  queuedOfApi: Database.Statement<{ api: string }, { n: number; bytes: number }>;
  anyDue: Database.Statement<{ now: number }, { one: number }>;
  apisWaiting: Database.Statement<[], { api: string }>;
  dueOfApi: Database.Statement<{ api: string; now: number; limit: number }, Candidate>;
  claim: Database.Statement<{ id: string; now: number; until: number }, Row>;
  anyExpired: Database.Statement<{ now: number }, { one: number }>;
  recover: Database.Statement<{ now: number; inFlight: string }>;
  renew: Database.Statement<{ id: string; attempts: number; until: number }>;
  complete: Database.Statement<{ id: string; attempts: number; now: number }>;
  retry: Database.Statement<{ id: string; attempts: number; runAt: number; error: string }>;
  fail: Database.Statement<{ id: string; attempts: number; now: number; error: string }>;
  prune: Database.Statement<{ api: string; keep: number }>;
  counts: Database.Statement<{ now: number }, CountRow>;
  countsOfApi: Database.Statement<{ api: string; now: number }, CountRow>;
  flush: Database.Statement<[]>;
  flushApi: Database.Statement<{ api: string }>;
  requeue: Database.Statement<{ now: number }>;
  requeueApi: Database.Statement<{ api: string; now: number }>;
}

// The distinct APIs with waiting jobs, one index seek each (SQLite has no loose index scan).
const APIS_WAITING_SQL = `
WITH RECURSIVE apis(api) AS (
  SELECT (SELECT min(api) FROM jobs WHERE state = 'waiting')
  UNION ALL
  SELECT (SELECT min(api) FROM jobs WHERE state = 'waiting' AND api > apis.api) FROM apis WHERE apis.api IS NOT NULL
)
SELECT api FROM apis WHERE api IS NOT NULL`;

export function prepareStatements(db: Database.Database): Statements {
  const fields = 'id, api, state, payload, attempts, error, created_at, run_at, lease_until, finished_at';
  const claimed = `id = @id AND state = 'active' AND attempts = @attempts`;
  const countsSql = (where: string) =>
    `SELECT state, (state = 'waiting' AND run_at > @now) AS later, count(*) AS n FROM jobs ${where} GROUP BY state, later`;
  return {
    insert: db.prepare(
      `INSERT INTO jobs (id, api, state, payload, attempts, created_at, run_at) VALUES (@id, @api, 'waiting', @payload, 0, @now, @runAt)`,
    ),
    get: db.prepare(`SELECT ${fields} FROM jobs WHERE id = @id`),
    queuedOfApi: db.prepare(
      // octet_length reads the size from the row's header, not the payload itself.
      `SELECT count(*) AS n, coalesce(sum(octet_length(payload)), 0) AS bytes FROM jobs WHERE api = @api AND state IN ('waiting', 'active')`,
    ),
    anyDue: db.prepare(`SELECT 1 AS one FROM jobs WHERE state = 'waiting' AND run_at <= @now LIMIT 1`),
    apisWaiting: db.prepare(APIS_WAITING_SQL),
    dueOfApi: db.prepare(
      `SELECT id, run_at, rowid AS seq FROM jobs WHERE state = 'waiting' AND api = @api AND run_at <= @now ORDER BY run_at, rowid LIMIT @limit`,
    ),
    claim: db.prepare(
      `UPDATE jobs SET state = 'active', attempts = attempts + 1, run_at = @now, lease_until = @until
       WHERE id = @id AND state = 'waiting' RETURNING ${fields}`,
    ),
    anyExpired: db.prepare(`SELECT 1 AS one FROM jobs WHERE state = 'active' AND lease_until <= @now LIMIT 1`),
    recover: db.prepare(
      `UPDATE jobs SET state = 'waiting', run_at = @now, lease_until = NULL
       WHERE state = 'active' AND lease_until <= @now AND id NOT IN (SELECT value FROM json_each(@inFlight))`,
    ),
    renew: db.prepare(`UPDATE jobs SET lease_until = @until WHERE ${claimed}`),
    complete: db.prepare(
      `UPDATE jobs SET state = 'completed', finished_at = @now, lease_until = NULL WHERE ${claimed}`,
    ),
    retry: db.prepare(
      `UPDATE jobs SET state = 'waiting', run_at = @runAt, lease_until = NULL, error = @error WHERE ${claimed}`,
    ),
    fail: db.prepare(
      `UPDATE jobs SET state = 'failed', finished_at = @now, lease_until = NULL, error = @error WHERE ${claimed}`,
    ),
    prune: db.prepare(
      `DELETE FROM jobs WHERE rowid IN (
         SELECT rowid FROM jobs WHERE api = @api AND state = 'completed' ORDER BY finished_at DESC, rowid DESC LIMIT -1 OFFSET @keep)`,
    ),
    counts: db.prepare(countsSql('')),
    countsOfApi: db.prepare(countsSql('WHERE api = @api')),
    flush: db.prepare(`DELETE FROM jobs WHERE state IN ('waiting', 'completed', 'failed')`),
    flushApi: db.prepare(`DELETE FROM jobs WHERE api = @api AND state IN ('waiting', 'completed', 'failed')`),
    requeue: db.prepare(
      `UPDATE jobs SET state = 'waiting', attempts = 0, error = NULL, run_at = @now, finished_at = NULL, lease_until = NULL WHERE state = 'failed'`,
    ),
    requeueApi: db.prepare(
      `UPDATE jobs SET state = 'waiting', attempts = 0, error = NULL, run_at = @now, finished_at = NULL, lease_until = NULL
       WHERE api = @api AND state = 'failed'`,
    ),
  };
}
