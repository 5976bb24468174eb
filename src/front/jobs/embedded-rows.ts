/**
 * A row is one job. The stored state is waiting, active, completed or failed; a waiting job whose
 * run_at is still ahead is reported as `delayed`. `attempts` counts claims (runs started).
 */
import type { JobInfo, JobState, QueueCounts } from './job-queue.js';

export interface Row {
  id: string;
  api: string;
  state: 'waiting' | 'active' | 'completed' | 'failed';
  payload: string;
  attempts: number;
  error: string | null;
  created_at: number;
  run_at: number;
  lease_until: number | null;
  finished_at: number | null;
}

/** One group of the counts query: a stored state, whether its run_at is ahead, how many. */
export interface CountRow {
  state: Row['state'];
  later: number;
  n: number;
}

export function toInfo(row: Row, now: number): JobInfo {
  const state: JobState = row.state === 'waiting' && row.run_at > now ? 'delayed' : row.state;
  return {
    id: row.id,
    api: row.api,
    state,
    payload: row.payload,
    attempts: row.attempts,
    error: row.error,
    createdAt: row.created_at,
    runAt: row.run_at,
    finishedAt: row.finished_at,
  };
}

export function toCounts(rows: CountRow[]): QueueCounts {
  const counts: QueueCounts = { waiting: 0, delayed: 0, active: 0, completed: 0, failed: 0 };
  for (const row of rows) {
    const state: JobState = row.state === 'waiting' && row.later ? 'delayed' : row.state;
    counts[state] += row.n;
  }
  return counts;
}
